package load

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"

	"github.com/idpbench/idpbench/internal/sample"
	"github.com/idpbench/idpbench/internal/schema"
)

// jitWatch follows the JIT compilers of the product's JVM through a step
// (Config.JITPidfile): the CPU time of HotSpot's compiler threads (named
// "C1 CompilerThreadN" and "C2 CompilerThreadN", 15 characters of it in
// /proc), in each warmup interval and over the window. Read from /proc, it
// costs the JVM nothing. (The JVM's own counter of compile time,
// java.ci.totalTime, counts each compile's elapsed time: on a busy 2-core
// machine it said 100% while the threads used 9% of a core.) A product
// with no JVM (compiled ahead of time) has no JIT to wait for: na says so
// and the warmup rule is the throughput's alone. The watcher goroutine
// alone uses it.
type jitWatch struct {
	rec    schema.StepJIT
	procs  *sample.ProcTable
	ticks  map[int]uint64 // CPU ticks of each compiler thread at lastAt, by thread id
	lastAt time.Time
	window uint64 // compiler ticks counted from the window's start; meaningful once inWindow
	hz     float64
	on     bool // a JVM was found and is still readable
}

// errNoJIT: no process of the group has HotSpot compiler threads.
var errNoJIT = errors.New("no JIT compiler threads (HotSpot's C1/C2 CompilerThread) in the product's process group: compiled ahead of time, or not a HotSpot JVM")

// compilerThread tells HotSpot's JIT compiler threads by their name.
func compilerThread(comm string) bool {
	return strings.HasPrefix(comm, "C1 CompilerThre") || strings.HasPrefix(comm, "C2 CompilerThre")
}

// newJITWatch finds the JVM among the processes of the group whose leader
// the first line of pidfile names (coldstart starts a product in a group
// of its own) and reads its compiler threads once. nil without a pidfile.
func newJITWatch(pidfile string, now time.Time) *jitWatch {
	if pidfile == "" {
		return nil
	}
	j := &jitWatch{procs: sample.NewProcTable(""), hz: float64(cpu.ClocksPerSec), lastAt: now}
	if err := j.find(pidfile); err != nil {
		j.rec.NA = err.Error()
	}
	return j
}

func (j *jitWatch) find(pidfile string) error {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return fmt.Errorf("--jit-pidfile: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	lead, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || lead <= 0 {
		return fmt.Errorf("--jit-pidfile %s: first line %q is no pid", pidfile, line)
	}
	if err := j.procs.Scan(); err != nil {
		return fmt.Errorf("--jit-pidfile: reading the processes: %w", err)
	}
	pids := []int{lead}
	for _, p := range j.procs.Procs {
		if p.PGRP == lead && p.PID != lead {
			pids = append(pids, p.PID)
		}
	}
	for _, pid := range pids {
		if t := j.compilerTicks(pid); t != nil {
			j.rec.PID, j.ticks, j.on = pid, t, true
			return nil
		}
	}
	return errNoJIT
}

// compilerTicks reads the CPU ticks of pid's compiler threads; nil when
// it has none (or is gone).
func (j *jitWatch) compilerTicks(pid int) map[int]uint64 {
	var t map[int]uint64
	for _, th := range j.procs.Threads(pid) {
		if compilerThread(th.Comm()) {
			if t == nil {
				t = map[int]uint64{}
			}
			t[th.PID] = th.CPU
		}
	}
	return t
}

// busy is the percent of one core the compiler threads used since the last
// reading; false when there is no JVM or it is gone (which ends the watch:
// na says why). HotSpot starts and stops compiler threads as the queue
// grows and shrinks: a new thread counts from zero, one that ended since
// the last reading loses what it used after it.
func (j *jitWatch) busy(now time.Time) (float64, bool) {
	if j == nil || !j.on {
		return 0, false
	}
	t := j.compilerTicks(j.rec.PID)
	if t == nil {
		if _, alive := j.procs.Read(j.rec.PID); !alive {
			j.rec.NA, j.on = fmt.Sprintf("the JVM (pid %d) ended mid-step", j.rec.PID), false
			return 0, false
		}
		t = map[int]uint64{} // every compiler thread stopped: an idle JIT
	}
	var used uint64
	for tid, v := range t {
		if prev, ok := j.ticks[tid]; ok && v >= prev {
			used += v - prev
		} else if !ok {
			used += v
		}
	}
	dt := now.Sub(j.lastAt).Seconds()
	j.ticks, j.lastAt = t, now
	j.window += used
	if dt <= 0 {
		return 0, true
	}
	return roundTenth(100 * float64(used) / j.hz / dt), true
}

// warmupInterval records the compiler threads' share of the warmup
// interval that ended now.
func (j *jitWatch) warmupInterval(now time.Time) {
	if pct, ok := j.busy(now); ok {
		j.rec.WarmupPct = append(j.rec.WarmupPct, pct)
	}
}

// windowStart and windowEnd bracket the measured window.
func (j *jitWatch) windowStart(now time.Time) {
	if _, ok := j.busy(now); ok {
		j.window = 0
	}
}

func (j *jitWatch) windowEnd(now, start time.Time) {
	if _, ok := j.busy(now); !ok || !now.After(start) {
		return
	}
	pct := roundTenth(100 * float64(j.window) / j.hz / now.Sub(start).Seconds())
	j.rec.WindowPct = &pct
}

// quietRun is how many of the last warmup intervals, at most n, the
// compiler threads used at most maxPct percent of a core; n when nothing
// is watched (no JIT to wait for).
func (j *jitWatch) quietRun(n int, maxPct float64) int {
	if j == nil || !j.on || maxPct <= 0 {
		return n
	}
	q, k := j.rec.WarmupPct, 0
	for k < n && k < len(q) && q[len(q)-1-k] <= maxPct {
		k++
	}
	return k
}

func (j *jitWatch) record() *schema.StepJIT {
	if j == nil {
		return nil
	}
	return &j.rec
}

func roundTenth(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
