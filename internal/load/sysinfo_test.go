package load

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestThreadDeltas(t *testing.T) {
	before := map[int]schedTimes{
		1: {run: 100, wait: 10},
		2: {run: 50, wait: 50},
		3: {run: 900, wait: 900}, // exits: lost
		4: {run: 500, wait: 500}, // its id is reused by a new thread
	}
	after := map[int]schedTimes{
		1: {run: 400, wait: 20},  // +300 +10
		2: {run: 60, wait: 450},  // +10 +400
		4: {run: 30, wait: 5},    // new thread: counts from zero
		5: {run: 1000, wait: 10}, // started in between
	}
	got := threadDeltas(before, after)
	want := []schedTimes{{1000, 10}, {10, 400}, {300, 10}, {30, 5}}
	if !slices.Equal(got, want) {
		t.Errorf("threadDeltas = %v, want %v (busiest first)", got, want)
	}
}

func TestCPUUseDriver(t *testing.T) {
	threads := []schedTimes{ // busiest first, as threadDeltas returns them
		{run: 1400 * time.Millisecond, wait: 1500 * time.Millisecond},
		{run: 100 * time.Millisecond, wait: 300 * time.Millisecond},
		{run: 10 * time.Millisecond, wait: 200 * time.Millisecond},
	}
	tests := []struct {
		name      string
		u         cpuUse
		loops     int
		runWait   float64 // -1: absent
		loopWait  float64
		limited   bool
		busyPct   float64
		reasonHas string
	}{
		{"starved single loop: only its own wait counts", cpuUse{selfS: 1.5, wallS: 3, hostPct: 70, threads: threads}, 1, 2.0, 1.5, true, 100, "host 70% busy"},
		{"two loops take the two busiest threads", cpuUse{selfS: 1.5, wallS: 3, threads: threads}, 2, 2.0, 1.8, false, 55, ""},
		{"no schedstat: CPU alone", cpuUse{selfS: 2.7, wallS: 3}, 1, -1, -1, true, 90, "queue wait unknown"},
		{"no window", cpuUse{selfS: 1, threads: threads}, 1, -1, -1, false, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.u.driver(tc.loops)
			if d.Loops != tc.loops || d.Limited != tc.limited || math.Abs(d.LoopBusyPct-tc.busyPct) > 1e-6 {
				t.Errorf("loops=%d limited=%v loop_busy_pct=%v; want %d %v %v", d.Loops, d.Limited, d.LoopBusyPct, tc.loops, tc.limited, tc.busyPct)
			}
			if !waitIs(d.RunWaitS, tc.runWait) || !waitIs(d.LoopWaitS, tc.loopWait) {
				t.Errorf("run_wait_s=%v loop_wait_s=%v; want %v %v", waitOr(d.RunWaitS), waitOr(d.LoopWaitS), tc.runWait, tc.loopWait)
			}
			if !strings.Contains(d.LimitedReason, tc.reasonHas) {
				t.Errorf("reason %q lacks %q", d.LimitedReason, tc.reasonHas)
			}
		})
	}
}

// waitIs: p is absent and want -1, or p holds want.
func waitIs(p *float64, want float64) bool {
	if p == nil {
		return want == -1
	}
	return math.Abs(*p-want) < 1e-9
}

func waitOr(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestHostCPULine: /proc/stat's aggregate line, busy counting steal, and
// the window's steal share from two readings.
func TestHostCPULine(t *testing.T) {
	for _, tt := range []struct {
		line string
		want hostCPU
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"cpu  100 5 50 800 10 3 2 30 7 0", hostCPU{busy: 190, total: 1000, steal: 30, hasSteal: true}},
		{"cpu  100 5 50 800 10 3 2", hostCPU{busy: 160, total: 970}}, // a kernel without steal
		{"cpu0 1 2 3 4 5 6 7 8", hostCPU{}},
		{"cpu  1 2 x 4 5", hostCPU{}},
		{"", hostCPU{}},
	} {
		if got := hostCPULine(tt.line); got != tt.want {
			t.Errorf("hostCPULine(%q) = %+v, want %+v", tt.line, got, tt.want)
		}
	}
	before := cpuSample{host: hostCPULine("cpu  100 0 100 800 0 0 0 0")}
	after := cpuSample{host: hostCPULine("cpu  300 0 300 1200 0 0 0 200")} // 1000 jiffies later: 600 busy, 200 of them stolen
	u := after.since(before)
	if u.hostPct != 60 || u.stealPct == nil || *u.stealPct != 20 {
		t.Errorf("host %v%%, steal %v; want 60%%, 20%%", u.hostPct, u.stealPct)
	}
	if d := u.driver(1); d.HostStealPct == nil || *d.HostStealPct != 20 {
		t.Errorf("driver host_steal_pct %v, want 20", d.HostStealPct)
	}
	noSteal := cpuSample{host: hostCPULine("cpu  300 0 200 1300 0 0 0")}
	if u := noSteal.since(before); u.stealPct != nil {
		t.Errorf("steal %v from a reading without it, want none", *u.stealPct)
	}
}

// TestCPUModel: the first processor's identity from /proc/cpuinfo.
func TestCPUModel(t *testing.T) {
	amd := "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\nstepping\t: 1\ncpu MHz\t\t: 2596.100\n\n" +
		"processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel name\t: other\n"
	arm := "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n\n"
	for _, tt := range []struct{ in, want string }{
		{amd, "AMD EPYC (AuthenticAMD family 26 model 2 stepping 1)"},
		{"model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz\n", "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"},
		{"vendor_id : GenuineIntel\ncpu family : 6\nmodel : 106\n", "GenuineIntel family 6 model 106"},
		{arm, ""},
		{"", ""},
	} {
		if got := cpuModel(tt.in); got != tt.want {
			t.Errorf("cpuModel(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
