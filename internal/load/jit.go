package load

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/hsperf"
	"github.com/idpbench/idpbench/internal/sample"
	"github.com/idpbench/idpbench/internal/schema"
)

// jitWatch follows the JIT compilers of the product's JVM through a step
// (Config.JITPidfile): how busy they were in each warmup interval and over
// the window, read from the JVM's hsperfdata file, which costs the JVM
// nothing (internal/hsperf). A product with no JVM (compiled ahead of
// time) has no JIT to wait for: na says so and the warmup rule is the
// throughput's alone. The watcher goroutine alone uses it.
type jitWatch struct {
	rec    schema.StepJIT
	path   string    // the JVM's hsperfdata file; "" when na
	last   float64   // compile seconds at lastAt
	lastAt time.Time // of the last reading
	window float64   // compile seconds at the window's start; < 0 before it
}

// newJITWatch finds the JVM among the processes of the group whose leader
// the first line of pidfile names (coldstart starts a product in a group
// of its own) and reads its compile time once. nil without a pidfile.
func newJITWatch(pidfile string, now time.Time) *jitWatch {
	if pidfile == "" {
		return nil
	}
	j := &jitWatch{window: -1}
	pids, err := jvmOf(pidfile)
	if err == nil {
		j.path, err = hsperf.Find("", pids)
	}
	if err == nil {
		j.rec.PID, _ = strconv.Atoi(j.path[strings.LastIndexByte(j.path, '/')+1:])
		j.last, err = j.read()
		j.lastAt = now
	}
	if err != nil {
		j.rec.NA, j.path = err.Error(), ""
	}
	return j
}

// jvmOf lists the processes of the group led by the pid in pidfile, the
// leader first.
func jvmOf(pidfile string) ([]int, error) {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return nil, fmt.Errorf("--jit-pidfile: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	lead, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || lead <= 0 {
		return nil, fmt.Errorf("--jit-pidfile %s: first line %q is no pid", pidfile, line)
	}
	t := sample.NewProcTable("")
	if err := t.Scan(); err != nil {
		return nil, fmt.Errorf("--jit-pidfile: reading the processes: %w", err)
	}
	pids := []int{lead}
	for _, p := range t.Procs {
		if p.PGRP == lead && p.PID != lead {
			pids = append(pids, p.PID)
		}
	}
	return pids, nil
}

func (j *jitWatch) read() (float64, error) {
	c, err := hsperf.Read(j.path)
	if err != nil {
		return 0, err
	}
	return c.CompileSeconds()
}

// busy is the percent of one core the JIT compilers spent compiling since
// the last reading; false when there is no JVM or the reading failed
// (which then ends the watch: na says why).
func (j *jitWatch) busy(now time.Time) (float64, bool) {
	if j == nil || j.path == "" {
		return 0, false
	}
	v, err := j.read()
	if err != nil {
		j.rec.NA, j.path = fmt.Sprintf("reading the JVM's counters failed mid-step: %v", err), ""
		return 0, false
	}
	dt := now.Sub(j.lastAt).Seconds()
	pct := 0.0
	if dt > 0 {
		pct = roundTenth(100 * (v - j.last) / dt)
	}
	j.last, j.lastAt = v, now
	return pct, true
}

// warmupInterval records the JIT's share of the warmup interval that
// ended now.
func (j *jitWatch) warmupInterval(now time.Time) {
	if pct, ok := j.busy(now); ok {
		j.rec.WarmupPct = append(j.rec.WarmupPct, pct)
	}
}

// windowStart and windowEnd bracket the measured window.
func (j *jitWatch) windowStart(now time.Time) {
	if _, ok := j.busy(now); ok {
		j.window = j.last
	}
}

func (j *jitWatch) windowEnd(now time.Time, start time.Time) {
	if j == nil || j.path == "" || j.window < 0 {
		return
	}
	v, err := j.read()
	if err != nil || !now.After(start) {
		return
	}
	pct := roundTenth(100 * (v - j.window) / now.Sub(start).Seconds())
	j.rec.WindowPct = &pct
}

// quietRun is how many of the last warmup intervals, at most n, the JIT
// spent at most maxPct percent of a core compiling; n when nothing is
// watched (no JIT to wait for).
func (j *jitWatch) quietRun(n int, maxPct float64) int {
	if j == nil || j.path == "" || maxPct <= 0 {
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
