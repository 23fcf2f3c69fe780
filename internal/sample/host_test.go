package sample

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestHostSteal: the host record's busy and steal shares come from the
// difference of two /proc/stat readings, steal counted as busy and as its
// own share of all cores.
func TestHostSteal(t *testing.T) {
	root := t.TempDir()
	stat := func(user, idle, steal int) {
		t.Helper()
		// cpu user nice system idle iowait irq softirq steal guest guest_nice, in USER_HZ (100/s)
		line := "cpu  " + strconv.Itoa(user) + " 0 0 " + strconv.Itoa(idle) + " 0 0 0 " + strconv.Itoa(steal) + " 0 0\n"
		if err := os.WriteFile(filepath.Join(root, "stat"), []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := newHostSource(root, false)
	ctx := context.Background()
	stat(1000, 1000, 100)
	if out := h.collect(ctx, &tick{now: time.Now(), baseline: true}, nil); len(out) != 0 {
		t.Fatalf("baseline tick wrote %v", out)
	}
	// Over the next second of two cores (200 ticks): 100 user, 60 idle, 40 steal.
	stat(1100, 1060, 140)
	out := h.collect(ctx, &tick{now: time.Now()}, nil)
	if len(out) != 1 || out[0].Source != "host" {
		t.Fatalf("want one host record, got %+v", out)
	}
	if got := out[0].CPUPct; got != 70 {
		t.Errorf("cpu_pct %v, want 70 (user + steal of all)", got)
	}
	if out[0].StealPct == nil || *out[0].StealPct != 20 {
		t.Errorf("steal_pct %v, want 20", out[0].StealPct)
	}
	if out[0].ProbeUS != nil {
		t.Errorf("probe_us %v without the probe, want none", *out[0].ProbeUS)
	}
	// No steal in the next interval: 0, recorded (not omitted).
	stat(1200, 1160, 140)
	out = h.collect(ctx, &tick{now: time.Now()}, nil)
	if len(out) != 1 || out[0].StealPct == nil || *out[0].StealPct != 0 {
		t.Errorf("want steal_pct 0 recorded, got %+v", out)
	}
}

// With the probe, every host record but the baseline's carries one run of
// it: some CPU time, in whole microseconds.
func TestHostProbe(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the probe needs Linux's per-thread CPU clock")
	}
	root := t.TempDir()
	line := func(user int) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, "stat"), []byte("cpu  "+strconv.Itoa(user)+" 0 0 1000 0 0 0 0 0 0\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := newHostSource(root, true)
	line(1000)
	h.collect(context.Background(), &tick{now: time.Now(), baseline: true}, nil)
	line(1100)
	out := h.collect(context.Background(), &tick{now: time.Now()}, nil)
	if len(out) != 1 || out[0].ProbeUS == nil || *out[0].ProbeUS < 1 || *out[0].ProbeUS != math.Round(*out[0].ProbeUS) {
		t.Fatalf("want one host record with probe_us in whole microseconds, got %+v", out)
	}
}
