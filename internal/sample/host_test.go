package sample

import (
	"context"
	"os"
	"path/filepath"
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
	h := newHostSource(root)
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
	// No steal in the next interval: 0, recorded (not omitted).
	stat(1200, 1160, 140)
	out = h.collect(ctx, &tick{now: time.Now()}, nil)
	if len(out) != 1 || out[0].StealPct == nil || *out[0].StealPct != 0 {
		t.Errorf("want steal_pct 0 recorded, got %+v", out)
	}
}
