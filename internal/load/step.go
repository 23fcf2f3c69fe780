package load

import (
	"strconv"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// step builds the result record of a finished run.
func (e *engine) step(w window) (*schema.Step, error) {
	c := e.cfg
	s := &schema.Step{
		Schema: schema.StepV1, ToolVersion: cli.Version(),
		Product: c.Product, ProductVersion: c.ProductVersion, Scenario: c.Scenario, Labels: c.Labels,
		TargetURL: redact(c), Connections: e.conns, RateRPS: c.agentRate(), Segment: c.Segment.record(c),
		WarmupS: c.Warmup.Seconds(), DurationS: c.Duration.Seconds(),
		IntervalS: c.Interval.Seconds(), TimeoutS: c.Timeout.Seconds(),
		Start: w.start.UTC(), End: w.end.UTC(), Status: schema.StatusComplete, Check: checkOf(c),
		LatencyModel: schema.ModelClosedLoop,
		Pool:         e.creds.use(), Driver: w.cpu.driver(e.driverLoops()), Host: hostInfo(),
		Intervals: []schema.Interval{},
	}
	s.Driver.Engine = e.engineName
	e.fillStart(s)
	e.fillWarmup(s, w.start)
	s.RampS = c.RampUp.Seconds()
	s.JIT = e.jit.record()
	if e.tallies.rate {
		s.LatencyModel = schema.ModelOpenLoop
	}
	if w.interrupted {
		s.Status = schema.StatusInterrupted
	}
	total := newTally(e.tallies.rate)
	for k := range e.intervalCount(w) {
		iv, err := e.interval(k, w, total)
		if err != nil {
			return nil, err
		}
		s.Intervals = append(s.Intervals, iv)
	}
	if err := fillTotals(s, total, w.end.Sub(w.start).Seconds()); err != nil {
		return nil, err
	}
	if e.tallies.rate {
		e.fillSustain(s, w.end.Sub(w.start).Seconds())
	}
	unreachable, lostAt := e.reach.summary(w.start, w.end)
	s.UnreachableS = unreachable.Seconds()
	if !lostAt.IsZero() && lostAt.Before(w.end) {
		// Unreachable from lostAt to the end of the step, drain included.
		at := lostAt.UTC()
		s.TargetLostAt = &at
		if !w.interrupted {
			s.Status = schema.StatusTargetLost
		}
	}
	if e.flows != nil {
		return s, e.flows.named.fill(s)
	}
	return s, nil
}

// intervalCount is how many intervals the window spans (the last may be short).
func (e *engine) intervalCount(w window) int {
	d := w.end.Sub(w.start)
	n := int(d / e.plan.interval)
	if d%e.plan.interval != 0 {
		n++
	}
	return n
}

// interval renders interval k and adds it to total.
func (e *engine) interval(k int, w window, total *tally) (schema.Interval, error) {
	t := newTally(e.tallies.rate)
	if k < len(e.tallies.per) && e.tallies.per[k] != nil {
		t = e.tallies.per[k]
	}
	total.add(t)
	from := e.plan.interval * time.Duration(k)
	length := min(e.plan.interval, w.end.Sub(w.start)-from).Seconds()
	h, err := schema.EncodeHistogram(t.hist)
	if err != nil {
		return schema.Interval{}, err
	}
	sum := schema.Summarize(t.hist)
	iv := schema.Interval{
		TS: from.Seconds(), LengthS: length, Requests: t.requests, Errors: t.errors.Total(),
		ConnectErrors: t.connect.Total(), QPS: perSecond(t.requests, length), P50MS: sum.P50, P99MS: sum.P99, MaxMS: sum.Max, Histogram: h,
	}
	if t.corrected != nil {
		if iv.CorrectedHistogram, err = schema.EncodeHistogram(t.corrected); err != nil {
			return schema.Interval{}, err
		}
		cs := schema.Summarize(t.corrected)
		iv.CorrectedP50MS, iv.CorrectedP99MS, iv.CorrectedMaxMS, iv.Late = cs.P50, cs.P99, cs.Max, t.late
	}
	return iv, nil
}

// fillTotals sets the step's counts and latency from the merged tally.
func fillTotals(s *schema.Step, t *tally, windowS float64) error {
	h, err := schema.EncodeHistogram(t.hist)
	if err != nil {
		return err
	}
	s.Histogram, s.LatencyMS = h, schema.Summarize(t.hist)
	s.Requests, s.OK, s.Errors, s.ConnectErrors = t.requests, t.ok, t.errors, t.connect
	s.StatusCodes = map[string]int64{}
	for code, n := range t.codes {
		s.StatusCodes[strconv.Itoa(code)] = n
	}
	if t.requests > 0 {
		s.ErrorRate = float64(t.errors.Total()) / float64(t.requests)
	}
	s.QPS = perSecond(t.requests, windowS)
	if t.corrected == nil {
		return nil
	}
	if s.CorrectedHistogram, err = schema.EncodeHistogram(t.corrected); err != nil {
		return err
	}
	cs := schema.Summarize(t.corrected)
	lateMax := float64(t.lateMax) / float64(time.Millisecond)
	s.CorrectedLatencyMS, s.Late, s.LateMaxMS = &cs, &t.late, &lateMax
	return nil
}

// fillSustain records, in rate mode, what the product did beside what was
// offered (completed within the window, the backlog at its end) and the
// sustain rule's verdict on the window's intervals (steps.Sustain).
func (e *engine) fillSustain(s *schema.Step, windowS float64) {
	var completed, backlog int64
	for i := range e.live {
		completed += e.live[i].completed
		backlog += e.live[i].backlog
	}
	rps := perSecond(completed, windowS)
	s.Completed, s.CompletedRPS, s.BacklogEnd = &completed, &rps, &backlog
	v := steps.Sustain(s)
	s.Sustain = &v
}

func perSecond(n int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(n) / seconds
}

// redact is the target URL without userinfo.
func redact(c *Config) string {
	u := *c.URL
	u.User = nil
	return u.String()
}

// fillStart records when the step was to begin and when it did (nothing
// of the latter for a step interrupted while it waited for StartAt).
func (e *engine) fillStart(s *schema.Step) {
	if !e.cfg.StartAt.IsZero() {
		s.StartAt = new(e.cfg.StartAt.UTC())
	}
	if e.started.IsZero() {
		return
	}
	s.StartedAt = new(e.started.UTC())
	if s.StartAt != nil {
		s.StartLateMS = new(float64(e.started.Sub(e.cfg.StartAt)) / float64(time.Millisecond))
	}
}
