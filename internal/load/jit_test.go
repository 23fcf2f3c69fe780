package load

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"

	"github.com/idpbench/idpbench/internal/sample"
)

// fakeJVM makes this test process look like a JVM to --jit-pidfile: a
// pidfile naming it, and a thread of its own named as HotSpot names its C2
// compiler thread, which burns CPU for busyFor or until the test ends,
// then idles until the test ends. It returns the pidfile and the thread's
// id.
func fakeJVM(t *testing.T, busyFor time.Duration) (pidfile string, tid int) {
	t.Helper()
	named, done, finished := make(chan error, 1), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid = syscall.Gettid()
		comm := fmt.Sprintf("/proc/self/task/%d/comm", tid)
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
	spin:
		for end := time.Now().Add(busyFor); time.Now().Before(end); {
			select {
			case <-done:
				break spin
			default:
			}
		}
		<-done
	}()
	if err := <-named; err != nil {
		t.Fatalf("naming a thread as a compiler thread: %v", err)
	}
	t.Cleanup(func() { close(done); <-finished })
	pidfile = filepath.Join(t.TempDir(), "product.pid")
	if err := os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return pidfile, tid
}

// TestWarmupWaitsForJIT: a server whose throughput is stable from the
// start, and a JVM whose compiler thread is busy for its first 1.5 s. With
// --warmup-jit-max 10 the warmup lasts until the JIT went quiet, and the
// step records how busy it was in each warmup interval and the window.
func TestWarmupWaitsForJIT(t *testing.T) {
	url, arrivals := delayServer(t, func(time.Duration) time.Duration { return 2 * time.Millisecond })
	c := adaptiveConfig(t, url, EngineRaw, 250*time.Millisecond, 10*time.Second)
	c.JITPidfile, _ = fakeJVM(t, 1500*time.Millisecond)
	c.WarmupJITMax = 10
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
// not waited for: a fake JVM whose compiler thread spins all through the
// step (it never goes quiet) ends its warmup by the throughput alone, at
// the first interval where the throughput rule holds (or at the cap, if it
// never does), and its JIT is recorded busy over the window. How busy
// depends on the CPU the spinning thread gets (a busy host gave it 12-30%
// of a core), so the window's figure is checked against the thread's own
// CPU time, read from /proc around the window (jitBracket): above 0, and
// no more than the thread used.
func TestWarmupJITRecordOnly(t *testing.T) {
	url, arrivals := delayServer(t, func(time.Duration) time.Duration { return 2 * time.Millisecond })
	c := adaptiveConfig(t, url, EngineRaw, 250*time.Millisecond, 10*time.Second)
	var tid int
	c.JITPidfile, tid = fakeJVM(t, time.Hour) // until the test ends
	b := &jitBracket{procs: sample.NewProcTable(""), tid: tid}
	c.Window = b
	s := mustRun(t, c)
	checkWarmupRecord(t, c, s, arrivals())
	j, q := s.JIT, s.WarmupQPS
	if j == nil || j.NA != "" || j.PID != os.Getpid() || len(j.WarmupPct) != len(q) || j.WindowPct == nil {
		t.Fatalf("jit %+v: want the fake JVM %d read, one figure per warmup interval (%d) and the window's", j, os.Getpid(), len(q))
	}
	t.Logf("warmup %.3f s, jit %v, window %v; the thread used %d ticks from the window's start to the drain", s.WarmupS, j.WarmupPct, *j.WindowPct, b.ticks())
	want := 0 // the throughput never steady: the cap ended the warmup
	if *s.WarmupStable {
		want = len(q)
	}
	if n := firstSteady(c, q); n != want {
		t.Errorf("warmup of %d intervals (qps %.0f), stable %v: the throughput rule alone holds first after %d (0: never): the warmup waited for the JIT (%v)",
			len(q), q, *s.WarmupStable, n, j.WarmupPct)
	}
	// The window's figure is the thread's ticks between two readings
	// inside the bracket, over at least the window: ticks / hz / window
	// bounds it from above, plus its rounding to a tenth.
	most := 100*float64(b.ticks())/float64(cpu.ClocksPerSec)/c.Duration.Seconds() + 0.05
	if w := *j.WindowPct; w <= 0 || w > most {
		t.Errorf("jit window_pct %v: want above 0 (a spinning thread) and at most %.1f (what the thread used, read around the window)", w, most)
	}
}

// firstSteady is how many warmup intervals the throughput rule alone
// gives a warmup of these throughputs: up to the first that ends a run of
// WarmupStable steady ones; 0 when none does (the cap ends it). The floor
// (Warmup) must be no longer than WarmupStable intervals.
func firstSteady(c *Config, qps []float64) int {
	for n := c.WarmupStable; n <= len(qps); n++ {
		if steady(qps[n-c.WarmupStable:n], c.WarmupTolerance) {
			return n
		}
	}
	return 0
}

// jitBracket is a WindowObserver that reads a thread's CPU ticks when the
// window starts, before the engine's JIT watch reads its own (the engine
// tells its observer first), and when the step has drained, after the
// watch's last reading: what the thread used between the watch's two
// window readings is at most what it used between these.
type jitBracket struct {
	procs       *sample.ProcTable
	tid         int
	start, last uint64
}

func (b *jitBracket) WindowStart(time.Time)       { b.start = b.read() }
func (b *jitBracket) StepDrained(context.Context) { b.last = b.read() }

// ticks is what the thread used from the window's start to the drain; 0
// when it was not found.
func (b *jitBracket) ticks() uint64 {
	if b.last < b.start {
		return 0
	}
	return b.last - b.start
}

func (b *jitBracket) read() uint64 {
	for _, th := range b.procs.Threads(os.Getpid()) {
		if th.PID == b.tid {
			return th.CPU
		}
	}
	return 0
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
