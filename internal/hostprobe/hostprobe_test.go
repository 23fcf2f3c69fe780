package hostprobe

import (
	"errors"
	"runtime"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	us := time.Microsecond
	for _, tc := range []struct {
		runs []time.Duration
		want float64
		ok   bool
	}{
		{nil, 0, false},
		{[]time.Duration{7 * us}, 7, true},
		{[]time.Duration{9 * us, 1 * us, 5 * us}, 5, true},
		{[]time.Duration{4 * us, 1 * us, 2 * us, 100 * us}, 3, true},
	} {
		got, ok := Median(tc.runs)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Median(%v) = %v, %v; want %v, %v", tc.runs, got, ok, tc.want, tc.ok)
		}
	}
}

// A series runs at once and then every period, and each run costs CPU time.
func TestSeries(t *testing.T) {
	s := Start(New(), 20*time.Millisecond)
	time.Sleep(70 * time.Millisecond)
	runs, err := s.Stop()
	if runtime.GOOS != "linux" {
		if !errors.Is(err, ErrUnsupported) {
			t.Fatalf("Stop on %s: err %v, want ErrUnsupported", runtime.GOOS, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) < 1 {
		t.Fatalf("no run in 70 ms at a period of 20 ms")
	}
	for _, d := range runs {
		if d <= 0 {
			t.Errorf("a run took %v of CPU: want more than nothing", d)
		}
	}
}
