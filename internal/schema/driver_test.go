package schema

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestDriverLimit(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name       string
		d          Driver
		windowS    float64
		busyPct    float64
		limited    bool
		wantReason string
	}{
		// The figures of the two directions of cmd/loadstep's TestDriverLimited.
		{"starved: pinned with a busy loop, queued most of the window",
			Driver{CPUS: 0.03, Loops: 1, LoopWaitS: f(2.97), HostCPUPct: 52}, 3, 100, true,
			"1 loop(s) running or queued 100% of the window (>= 80%): cpu 1%, queued 99%, host 52% busy"},
		{"a 5 ms server: the driver sleeps", Driver{CPUS: 0.09, Loops: 2, LoopWaitS: f(0.06)}, 3, 2.5, false, ""},
		{"half a core and queued the other half", Driver{CPUS: 1.44, Loops: 1, LoopWaitS: f(1.44)}, 3, 96, true, "queued 48%"},
		{"at the threshold", Driver{CPUS: 2, Loops: 2, LoopWaitS: f(2.8)}, 3, 80, true, "2 loop(s)"},
		{"just below it", Driver{CPUS: 2, Loops: 2, LoopWaitS: f(2.79)}, 3, 79.83, false, ""},
		// A co-located product filling the host: the driver queues on every
		// wakeup but sleeps between them (refop auth_code, nethttp).
		{"product fills the host", Driver{CPUS: 1.26, Loops: 2, RunWaitS: f(3.2), LoopWaitS: f(1.8), HostCPUPct: 99}, 6, 25.5, false, ""},
		{"busy on CPU alone, no queue wait known", Driver{CPUS: 2.7, Loops: 1}, 3, 90, true, "queue wait unknown"},
		{"a single loop is judged as one, whatever gomaxprocs", Driver{CPUS: 2.6, GOMAXPROCS: 8, Loops: 1, LoopWaitS: f(0)}, 3, 86.67, true, "cpu 87%"},
		{"an older record: no loops", Driver{CPUS: 5.9, CPUPct: 197, GOMAXPROCS: 2}, 3, 0, false, ""},
		{"no window", Driver{CPUS: 1, Loops: 1}, 0, 0, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.d
			d.Limited, d.LimitedReason = !tc.limited, "stale" // overwritten
			DriverLimit(&d, tc.windowS)
			if d.Limited != tc.limited || math.Abs(d.LoopBusyPct-tc.busyPct) > 0.01 {
				t.Errorf("limited=%v loop_busy_pct=%.2f, want %v %.2f", d.Limited, d.LoopBusyPct, tc.limited, tc.busyPct)
			}
			if tc.limited != (d.LimitedReason != "") || !strings.Contains(d.LimitedReason, tc.wantReason) {
				t.Errorf("reason %q, want one containing %q only when limited", d.LimitedReason, tc.wantReason)
			}
		})
	}
}

// A record from before the queue-wait fields decodes with them absent, and
// the new fields survive a round trip.
func TestDriverFieldsOldAndNew(t *testing.T) {
	s := committedStepV1(t)
	if d := s.Driver; d.RunWaitS != nil || d.LoopWaitS != nil || d.Loops != 0 || d.LimitedReason != "" || d.CPUS == 0 {
		t.Errorf("old driver decoded as %+v", d)
	}
	w, lw := 1.5, 1.25
	in := Driver{CPUS: 1, Loops: 2, RunWaitS: &w, LoopWaitS: &lw, LoopBusyPct: 70, LimitedReason: "r", Limited: true}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"run_wait_s":1.5`, `"loop_wait_s":1.25`, `"loops":2`, `"loop_busy_pct":70`, `"limited_reason":"r"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("%s lacks %s", b, key)
		}
	}
	var out Driver
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if *out.RunWaitS != w || *out.LoopWaitS != lw || out.Loops != 2 || out.LimitedReason != "r" {
		t.Errorf("round trip: %+v", out)
	}
}
