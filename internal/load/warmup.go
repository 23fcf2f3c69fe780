package load

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// settler is an adaptive warmup's record: the throughput of each warmup
// interval and the verdict. The watcher alone writes it; the step reads it
// once the watcher has returned, the progress line reads only run.
type settler struct {
	at   time.Time // the end of the last interval recorded (launch at first)
	done int64     // requests completed by then
	qps  []float64 // completed requests per second of each warmup interval
	// Rate mode: the corrected latency's logarithms summed (ln ns, in
	// thousandths) and the answered requests by then, the geometric mean
	// corrected latency of each interval (ms; NaN without an answer), and
	// when the ramp's last interval ended.
	correctedLog, answered int64
	latencyMS              []float64
	rampDone               int
	stable                 *bool        // true: stability ended the warmup; false: the cap did; nil: neither (yet)
	run                    atomic.Int32 // how many of the last intervals are stable together, for the progress line
}

// warmup waits out the warmup: a fixed one, or an adaptive one (settle).
// False when ctx was cancelled or every worker stopped first.
func (e *engine) warmup(ctx context.Context, done <-chan struct{}) bool {
	if e.cfg.WarmupMax == 0 {
		return sleepUntil(ctx, done, e.plan.start())
	}
	defer e.decide()
	return e.settle(ctx, done)
}

// settle is the adaptive warmup. The window's start was set to the cap
// before the workers started, so a warmup that never settles needs no
// decision. The watcher wakes at the end of each interval from launch
// and takes the interval's completions from the live counters; once the
// floor has passed and the last WarmupStable intervals are stable, it
// moves the start earlier, to just after the decision (stableAt), and
// waits for it: the lead between the two is no interval of its own.
func (e *engine) settle(ctx context.Context, done <-chan struct{}) bool {
	e.warm.at = e.plan.launch
	for {
		start := e.plan.start().Sub(e.plan.launch)
		next := min(e.boundaryAfter(time.Now()), start)
		if !sleepUntil(ctx, done, e.plan.launch.Add(next)) {
			return false
		}
		now := time.Now()
		run := e.recordInterval(now)
		switch {
		case next >= start: // the cap, or the decided start
			if e.warm.stable == nil {
				e.warm.stable = new(run == e.cfg.WarmupStable)
			}
			return true
		case e.warm.stable == nil && next >= e.cfg.Warmup && run == e.cfg.WarmupStable:
			e.warm.stable = new(true)
			if e.stableAt(now) {
				return sleepUntil(ctx, done, e.plan.start())
			}
		}
	}
}

// recordInterval records the throughput of the warmup interval that ended
// now and returns how many of the last intervals are stable together.
func (e *engine) recordInterval(now time.Time) int {
	n := e.liveTotals().sent
	e.warm.qps = append(e.warm.qps, perSecond(n-e.warm.done, now.Sub(e.warm.at).Seconds()))
	e.warm.at, e.warm.done = now, n
	e.jit.warmupInterval(now)
	var run int
	if e.tallies.rate {
		run = e.recordLatency(now)
	} else {
		run = min(e.stableRun(), e.jit.quietRun(e.cfg.WarmupStable, e.cfg.WarmupJITMax))
	}
	e.warm.run.Store(int32(run))
	return run
}

// recordLatency records, in rate mode, the geometric mean of the corrected
// latency in the warmup interval that ended now (a few slow answers move it
// little, as they move a median little) and returns how many of the last
// intervals after the ramp have settled together (calmRun).
func (e *engine) recordLatency(now time.Time) int {
	var sum, n int64
	for i := range e.live {
		sum += e.live[i].correctedLog.Load()
		n += e.live[i].answered.Load()
	}
	ms := math.NaN()
	if n > e.warm.answered {
		ms = math.Exp(float64(sum-e.warm.correctedLog)/1000/float64(n-e.warm.answered)) / 1e6
	}
	e.warm.correctedLog, e.warm.answered = sum, n
	e.warm.latencyMS = append(e.warm.latencyMS, ms)
	if now.Sub(e.plan.launch) < e.cfg.RampUp+e.plan.interval/2 { // an interval of the ramp
		e.warm.rampDone = len(e.warm.latencyMS)
	}
	return calmRun(e.warm.latencyMS[e.warm.rampDone:], e.cfg.WarmupStable, e.cfg.WarmupTolerance)
}

// calmRun says, in rate mode, whether the warmup has settled: n when each
// of the last n intervals after the ramp (all answered) lies within pct
// percent, or calmSlackMS, above the calmest of them all; else how many of
// the last do. A queue left by the start, or one that formed as the rate
// was reached, keeps the latency above the calm it drains to, and a latency
// still falling (a runtime still warming) makes each interval the new calm
// while the ones before it lie above: n intervals at the calm are a second
// or two in which it held. Then the window opens on the rate's own latency
// rather than on a queue (issue 47: the first second's corrected P50 at
// most twice the last's). A product that falls behind climbs from its
// calmest interval until the cap; the sustain rule then judges the window.
func calmRun(ms []float64, n int, pct float64) int {
	calm := math.Inf(1)
	for _, v := range ms {
		if !math.IsNaN(v) {
			calm = min(calm, v)
		}
	}
	band := max(calm*(1+pct/100), calm+calmSlackMS)
	run := 0
	for i := len(ms) - 1; i >= 0 && run < n && !math.IsNaN(ms[i]) && ms[i] <= band; i-- {
		run++
	}
	return run
}

// calmSlackMS is how far above a sub-millisecond calm an interval may lie
// and still be calm: the 1 ms of the rule before it let 0.6-1.9 ms open
// windows that settled at 0.35 (results/full-2026-12-06-j, the reference
// OP's userinfo).
const calmSlackMS = 0.2

// decideLead is the time between the decision and the window's start;
// see stableAt. It was half an interval to the next interval boundary,
// which left a whole second unmeasured at the end of nearly every warmup
// (the decision comes just after a boundary).
const decideLead = 100 * time.Millisecond

// stableAt makes the window start decideLead after now, the moment the
// watcher found the throughput stable, or leaves it at the cap when that
// comes first, and wakes the workers that wait for the start (decide).
// True when it moved the start. The window's intervals count from its
// start (plan.slot), so the start need not be an interval boundary of the
// warmup.
//
// No request is misclassed by the move. A worker classes a request (slot)
// by reading the start after the request was due. One that read the start
// before this store read the cap, later than the new start, and its
// request was due before the store: in the warmup by either start, as
// long as the new start lies after the store. The store follows the clock
// read of now by a few instructions; the lead is how long the watcher's
// thread would have to be descheduled between the two to break that.
// Every request due after the store is classed by the new start. The end
// moves with the start: a worker that read the old end before the store
// read a later one, and at that moment, before the new start, both said
// the same (send).
func (e *engine) stableAt(now time.Time) bool {
	start := now.Sub(e.plan.launch) + decideLead
	if start >= e.cfg.WarmupMax {
		return false
	}
	e.plan.setWindow(start, e.cfg.Duration)
	e.decide()
	return true
}

// boundaryAfter is the first interval boundary, as an offset from launch,
// after t and after launch.
func (e *engine) boundaryAfter(t time.Time) time.Duration {
	d, iv := t.Sub(e.plan.launch), e.plan.interval
	return max(d/iv+1, 1) * iv
}

// decide wakes the workers waiting for the window's start (untilStart):
// the start is final. Only the watcher calls it, at most twice.
func (e *engine) decide() {
	select {
	case <-e.decided:
	default:
		close(e.decided)
	}
}

// untilStart sleeps until the window starts; false when ctx was cancelled
// first. The start may move earlier while it sleeps: the decision wakes it.
func (e *engine) untilStart(ctx context.Context) bool {
	if !sleepUntil(ctx, e.decided, e.plan.start()) && ctx.Err() != nil {
		return false
	}
	return sleepUntil(ctx, nil, e.plan.start())
}

// stableRun is how many of the last warmup intervals, at most
// WarmupStable, lie within WarmupTolerance of their mean (above zero); 1
// for a last interval that completed anything but differs from the one
// before.
func (e *engine) stableRun() int {
	q := e.warm.qps
	for k := min(e.cfg.WarmupStable, len(q)); k >= 2; k-- {
		if steady(q[len(q)-k:], e.cfg.WarmupTolerance) {
			return k
		}
	}
	if len(q) > 0 && q[len(q)-1] > 0 {
		return 1
	}
	return 0
}

// steady: every value lies within ± pct percent of their mean, and the
// mean is above zero.
func steady(q []float64, pct float64) bool {
	var mean float64
	for _, v := range q {
		mean += v / float64(len(q))
	}
	if mean <= 0 {
		return false
	}
	for _, v := range q {
		if v < mean*(1-pct/100) || v > mean*(1+pct/100) {
			return false
		}
	}
	return true
}

// fillWarmup records the warmup of a step whose window started at start.
func (e *engine) fillWarmup(s *schema.Step, start time.Time) {
	c := e.cfg
	if c.WarmupMax == 0 {
		return // fixed: warmup_s is --warmup, as it always was
	}
	s.WarmupS = start.Sub(e.plan.launch).Seconds()
	s.WarmupRule = &schema.WarmupRule{MinS: c.Warmup.Seconds(), MaxS: c.WarmupMax.Seconds(),
		StableIntervals: c.WarmupStable, TolerancePct: c.WarmupTolerance, JITMaxPct: c.WarmupJITMax}
	s.WarmupStable, s.WarmupQPS = e.warm.stable, e.warm.qps
	if e.tallies.rate {
		s.WarmupRule.Settle = schema.SettleCorrectedLatency
		for _, v := range e.warm.latencyMS {
			s.WarmupCorrectedMS = append(s.WarmupCorrectedMS, nanToNeg(v))
		}
	}
}

// nanToNeg writes an interval without an answer as -1 (JSON has no NaN).
func nanToNeg(v float64) float64 {
	if math.IsNaN(v) {
		return -1
	}
	return v
}
