package load

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeJVM makes this test process look like a JVM to --jit-pidfile: a
// pidfile naming it, and a thread of its own named as HotSpot names its C2
// compiler thread, which burns CPU for busyFor, then idles until the test
// ends. It returns the pidfile.
func fakeJVM(t *testing.T, busyFor time.Duration) string {
	t.Helper()
	named, done, finished := make(chan error, 1), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		comm := fmt.Sprintf("/proc/self/task/%d/comm", syscall.Gettid())
		was, err := os.ReadFile(comm)
		if err == nil {
			err = os.WriteFile(comm, []byte("C2 CompilerThread0"), 0o600)
		}
		named <- err
		if err != nil {
			return
		}
		// The thread goes back to the scheduler with its own name (it may
		// be the process's main thread, which outlives the goroutine).
		defer os.WriteFile(comm, was, 0o600)
		for end := time.Now().Add(busyFor); time.Now().Before(end); {
		}
		<-done
	}()
	if err := <-named; err != nil {
		t.Fatalf("naming a thread as a compiler thread: %v", err)
	}
	t.Cleanup(func() { close(done); <-finished })
	pidfile := filepath.Join(t.TempDir(), "product.pid")
	if err := os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return pidfile
}

// TestWarmupWaitsForJIT: a server whose throughput is stable from the
// start, and a JVM whose compiler thread is busy for its first 1.5 s. With
// --warmup-jit-max 10 the warmup lasts until the JIT went quiet, and the
// step records how busy it was in each warmup interval and the window.
func TestWarmupWaitsForJIT(t *testing.T) {
	url, arrivals := delayServer(t, func(time.Duration) time.Duration { return 2 * time.Millisecond })
	c := adaptiveConfig(t, url, EngineRaw, 250*time.Millisecond, 10*time.Second)
	c.JITPidfile, c.WarmupJITMax = fakeJVM(t, 1500*time.Millisecond), 10
	s := mustRun(t, c)
	if s.WarmupRule == nil || s.WarmupRule.JITMaxPct != 10 || s.WarmupStable == nil || !*s.WarmupStable {
		t.Fatalf("warmup_rule %+v, stable %v: want jit_max_pct 10 and stable", s.WarmupRule, s.WarmupStable)
	}
	checkWarmupRecord(t, c, s, arrivals())
	j := s.JIT
	if j == nil || j.NA != "" || j.PID != os.Getpid() {
		t.Fatalf("jit %+v: want the fake JVM %d read", j, os.Getpid())
	}
	t.Logf("warmup %.3f s, jit %v, window %v", s.WarmupS, j.WarmupPct, j.WindowPct)
	if s.WarmupS < 1.5 {
		t.Errorf("warmup %.3f s: ended while the JIT still compiled (it did for 1.5 s): %v", s.WarmupS, j.WarmupPct)
	}
	q := j.WarmupPct
	if len(q) != len(s.WarmupQPS) || len(q) < 4 || q[0] < 20 {
		t.Fatalf("jit warmup_pct %v: want one per warmup interval (%d), the first busy (a spinning thread: up to 100)", q, len(s.WarmupQPS))
	}
	for _, v := range q[len(q)-3:] {
		if v > 10 {
			t.Errorf("jit warmup_pct %v: the last 3 intervals are above 10%%", q)
		}
	}
	if j.WindowPct == nil || *j.WindowPct > 10 {
		t.Errorf("jit window_pct %v: want it recorded, about 0", j.WindowPct)
	}
}

// TestWarmupJITRecordOnly: without --warmup-jit-max the JIT is recorded,
// not waited for: the same fake ends its warmup by the throughput alone.
func TestWarmupJITRecordOnly(t *testing.T) {
	url, arrivals := delayServer(t, func(time.Duration) time.Duration { return 2 * time.Millisecond })
	c := adaptiveConfig(t, url, EngineRaw, 250*time.Millisecond, 10*time.Second)
	c.JITPidfile = fakeJVM(t, 8*time.Second)
	s := mustRun(t, c)
	checkWarmupRecord(t, c, s, arrivals())
	if s.WarmupS >= 8 || s.JIT == nil || len(s.JIT.WarmupPct) == 0 || s.JIT.WindowPct == nil || *s.JIT.WindowPct < 20 {
		t.Errorf("warmup %.3f s, jit %+v: want a warmup that did not wait for the JIT, the JIT recorded busy (a spinning thread)", s.WarmupS, s.JIT)
	}
}

// TestJITWatchNoJVM: a product without a JVM has no JIT to wait for; the
// step says why nothing was read and the rule is the throughput's alone.
func TestJITWatchNoJVM(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "product.pid")
	os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	j := newJITWatch(pidfile, time.Now())
	if j == nil || !strings.Contains(j.rec.NA, "no JIT compiler threads") || j.quietRun(3, 10) != 3 {
		t.Errorf("no JVM: %+v, quiet run %d; want na saying there are no compiler threads, and no condition", j, j.quietRun(3, 10))
	}
	os.WriteFile(pidfile, []byte("kc.sh\n"), 0o600)
	if j := newJITWatch(pidfile, time.Now()); j == nil || !strings.Contains(j.rec.NA, "no pid") {
		t.Errorf("a pidfile without a pid: %+v", j)
	}
	if newJITWatch("", time.Now()) != nil {
		t.Error("no --jit-pidfile: want no watch")
	}
}
