package load

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/hsperf"
)

// fakeJVM makes this test process look like a JVM to --jit-pidfile: a
// pidfile naming it and, under a TMPDIR of the test's, an hsperfdata file
// whose compile time grows at busyPct percent of a core until busyFor has
// passed, then stays. It returns the pidfile.
func fakeJVM(t *testing.T, busyPct float64, busyFor time.Duration) string {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(tmp, "hsperfdata_test")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, strconv.Itoa(os.Getpid()))
	write := func(compiled time.Duration) {
		// A new file renamed into place: a reader never sees half of one.
		b := hsperf.Encode(hsperf.Counters{"java.ci.totalTime": int64(compiled), "sun.os.hrt.frequency": int64(time.Second)}, binary.LittleEndian)
		if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
			t.Error(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Error(err)
		}
	}
	write(0)
	start, done := time.Now(), make(chan struct{})
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				write(time.Duration(float64(min(time.Since(start), busyFor)) * busyPct / 100))
			}
		}
	}()
	t.Cleanup(func() { close(done) })
	pidfile := filepath.Join(t.TempDir(), "product.pid")
	if err := os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return pidfile
}

// TestWarmupWaitsForJIT: a server whose throughput is stable from the
// start, and a JVM compiling at 150% of a core for its first 1.5 s. With
// --warmup-jit-max 10 the warmup lasts until the JIT went quiet, and the
// step records how busy it was in each warmup interval and the window.
func TestWarmupWaitsForJIT(t *testing.T) {
	url, arrivals := delayServer(t, func(time.Duration) time.Duration { return 2 * time.Millisecond })
	c := adaptiveConfig(t, url, EngineRaw, 250*time.Millisecond, 10*time.Second)
	c.JITPidfile, c.WarmupJITMax = fakeJVM(t, 150, 1500*time.Millisecond), 10
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
	if len(q) != len(s.WarmupQPS) || len(q) < 4 || q[0] < 100 {
		t.Fatalf("jit warmup_pct %v: want one per warmup interval (%d), the first about 150", q, len(s.WarmupQPS))
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
	c.JITPidfile = fakeJVM(t, 150, 8*time.Second)
	s := mustRun(t, c)
	checkWarmupRecord(t, c, s, arrivals())
	if s.WarmupS >= 8 || s.JIT == nil || len(s.JIT.WarmupPct) == 0 || s.JIT.WindowPct == nil || *s.JIT.WindowPct < 100 {
		t.Errorf("warmup %.3f s, jit %+v: want a warmup that did not wait for the JIT, the JIT recorded busy (about 150%%)", s.WarmupS, s.JIT)
	}
}

// TestJITWatchNoJVM: a product without a JVM has no JIT to wait for; the
// step says why nothing was read and the rule is the throughput's alone.
func TestJITWatchNoJVM(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	pidfile := filepath.Join(t.TempDir(), "product.pid")
	os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	j := newJITWatch(pidfile, time.Now())
	if j == nil || !strings.Contains(j.rec.NA, "no hsperfdata") || j.quietRun(3, 10) != 3 {
		t.Errorf("no JVM: %+v, quiet run %d; want na naming the missing hsperfdata and no condition", j, j.quietRun(3, 10))
	}
	os.WriteFile(pidfile, []byte("kc.sh\n"), 0o600)
	if j := newJITWatch(pidfile, time.Now()); j == nil || !strings.Contains(j.rec.NA, "no pid") {
		t.Errorf("a pidfile without a pid: %+v", j)
	}
	if newJITWatch("", time.Now()) != nil {
		t.Error("no --jit-pidfile: want no watch")
	}
}
