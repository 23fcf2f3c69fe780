package load

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// queueServer is one server thread behind every connection: each request
// holds it for service, so it completes at most 1/service a second and
// queues the rest in arrival order, as a saturated product does. From
// pauseAt (after the first request) it stops for pause, once, holding
// whatever arrives meanwhile.
type queueServer struct {
	mu             sync.Mutex
	service, pause time.Duration
	pauseAt        time.Duration
	first          time.Time
	paused         bool
}

func (q *queueServer) sender(int) Sender { return queueSender{q} }

type queueSender struct{ q *queueServer }

func (s queueSender) Send(*Request, time.Time) Response {
	q := s.q
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	if q.first.IsZero() {
		q.first = now
	}
	if q.pause > 0 && !q.paused && now.Sub(q.first) >= q.pauseAt {
		q.paused = true
		time.Sleep(q.pause)
	}
	time.Sleep(q.service)
	return Response{Status: 200, Body: []byte(`{"issuer":"x"}`)}
}

func (queueSender) Close() {}

// rateRun runs a rate-mode step of rate on 8 connections against q: a 1 s
// warmup and a window of ten intervals (what the rule judges) of interval.
func rateRun(t *testing.T, q *queueServer, rate float64, interval time.Duration) *schema.Step {
	t.Helper()
	c, _ := fakeConfig(t, 0)
	c.NewSender = q.sender
	c.Connections, c.Rate = 8, rate
	c.Warmup, c.Duration, c.Interval = time.Second, 10*interval, interval
	return mustRun(t, c)
}

// TestSustainVerdict: the step judges its own window (steps.Sustain) and
// records what the product did beside what was offered. The servers'
// answers are known whatever the machine's speed: one at 1.5 times its
// capacity can only fall further behind (a slower machine only lowers its
// capacity); one at a tenth of it keeps up; one that stops once for 1.5 s
// and then catches up (in 0.15 s at this rate) is sustained, and its pause
// is in its P99. A rule that called a saturated window sustained, or a
// pause a saturation, fails here.
func TestSustainVerdict(t *testing.T) {
	t.Run("slower than the rate", func(t *testing.T) {
		s := rateRun(t, &queueServer{service: 5 * time.Millisecond}, 300, 250*time.Millisecond) // capacity 200/s at most
		v := s.Sustain
		if v == nil || v.Verdict != schema.SustainNo || v.GrowthMSPerS < 100 {
			t.Fatalf("sustain %+v: want not sustained, the queue growing 300-500 ms a second", v)
		}
		if *s.CompletedRPS > 0.75*s.RateRPS || *s.BacklogEnd < 250 || s.Requests != 750 {
			t.Errorf("completed %.0f/s of %.0f offered, backlog %d at the end, %d requests due: want at most 2/3 of the offer done (capacity 200/s), a backlog of at least the 100/s more than it served for 2.5 s, all 750 due counted",
				*s.CompletedRPS, s.RateRPS, *s.BacklogEnd, s.Requests)
		}
	})
	t.Run("room to spare", func(t *testing.T) {
		s := rateRun(t, &queueServer{service: time.Millisecond}, 100, 500*time.Millisecond)
		v := s.Sustain
		if v == nil || v.Verdict != schema.SustainYes || v.Intervals != 10 || v.WindowS != 5 {
			t.Fatalf("sustain %+v: want sustained, judged on 10 intervals over 5 s", v)
		}
		if *s.CompletedRPS < 0.95*s.RateRPS || *s.BacklogEnd > 8 {
			t.Errorf("completed %.1f/s of %.0f, backlog %d at the end: want the offer done, at most one request per connection left", *s.CompletedRPS, s.RateRPS, *s.BacklogEnd)
		}
	})
	t.Run("a pause, then caught up", func(t *testing.T) {
		// The first request comes at the start of the 1 s warmup: the
		// pause runs from 2.5 s to 4 s of the step, 1.5-3 s into the window.
		s := rateRun(t, &queueServer{service: time.Millisecond, pause: 1500 * time.Millisecond, pauseAt: 2500 * time.Millisecond}, 100, 500*time.Millisecond)
		v := s.Sustain
		if v == nil || v.Verdict != schema.SustainYes {
			t.Fatalf("sustain %+v: want sustained (the pause was caught up)", v)
		}
		if s.CorrectedLatencyMS.P99 < 1000 {
			t.Errorf("corrected P99 %.1f ms: want the pause in it (up to 1.5 s)", s.CorrectedLatencyMS.P99)
		}
	})
}

// TestRateSettle: in rate mode an adaptive warmup waits until the
// corrected latency no longer falls. The server stops for 1.2 s at the
// start (a start-up stall, as a product's first requests on fresh
// connections queue); a fixed 1 s warmup would open the window on its
// queue. The adaptive one ends once the queue has drained, so the
// window's first interval is no slower than twice its last, and the
// warmup's curve is recorded.
func TestRateSettle(t *testing.T) {
	q := &queueServer{service: time.Millisecond, pause: 1200 * time.Millisecond}
	c, _ := fakeConfig(t, 0)
	c.NewSender = q.sender
	c.Connections, c.Rate = 8, 100
	c.Warmup, c.WarmupMax, c.WarmupStable, c.WarmupTolerance = time.Second, 6*time.Second, 2, 10
	c.Duration, c.Interval = 2*time.Second, 250*time.Millisecond
	s := mustRun(t, c)
	if s.WarmupRule == nil || s.WarmupRule.Settle != schema.SettleCorrectedLatency || s.WarmupStable == nil || !*s.WarmupStable {
		t.Fatalf("warmup rule %+v, stable %v: want the rate-mode rule, ended by it", s.WarmupRule, s.WarmupStable)
	}
	if s.WarmupS < 1.2 || len(s.WarmupCorrectedMS) < 5 {
		t.Errorf("warmup %.2f s, curve %v: want it past the 1.2 s stall and its drain, each interval's latency recorded", s.WarmupS, s.WarmupCorrectedMS)
	}
	first, last := s.Intervals[0].CorrectedP50MS, s.Intervals[len(s.Intervals)-1].CorrectedP50MS
	if first > 2*last+1 {
		t.Errorf("corrected P50 %.1f ms in the window's first interval, %.1f in its last: want the start-up queue in the warmup", first, last)
	}
}

// TestRampSchedule: with a ramp the schedule climbs linearly to the rate
// over the ramp (slot n at sqrt(2Tn/R)), then holds it, evenly spaced
// half the ramp later than without one; the times never go backwards.
func TestRampSchedule(t *testing.T) {
	p := plan{launch: time.Unix(1000, 0), rate: 100, ramp: 2 * time.Second}
	at := func(n int64) float64 { return p.intended(n).Sub(p.launch).Seconds() }
	for _, tc := range []struct {
		n    int64
		want float64 // seconds after launch
	}{
		{0, 0}, {25, 1}, {50, 1.4142135623730951}, // sqrt(2*2*n/100)
		{100, 2}, {101, 2.01}, {300, 4}, // R*T/2 = 100 on: n/100 + 1
	} {
		if got := at(tc.n); got < tc.want-1e-9 || got > tc.want+1e-9 {
			t.Errorf("slot %d due %.6f s after launch, want %.6f", tc.n, got, tc.want)
		}
	}
	prev := -1.0
	for n := range int64(400) {
		if got := at(n); got < prev {
			t.Fatalf("slot %d due at %.6f s, before slot %d at %.6f s", n, got, n-1, prev)
		}
		prev = at(n)
	}
}

// TestCalmRun: in rate mode the warmup has settled once each of the last n
// intervals after the ramp lies within 50% (or 0.2 ms) above the calmest
// of them all: a queue that drains, one that forms as the rate is reached,
// or a latency still falling keeps the intervals before the last above it;
// a noisy latency back at its calm settles; one that climbs from its first
// interval does not.
func TestCalmRun(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		ms   []float64
		n    int
		want int
	}{
		{[]float64{7, 7}, 2, 2},
		{[]float64{0.3, 0.45}, 2, 2},                  // within 0.2 ms of a sub-millisecond calm
		{[]float64{0.3, 0.9}, 2, 0},                   // 0.6 ms above it: not calm (the rule before took 1 ms)
		{[]float64{0.66, 0.91, 0.63, 1.63}, 2, 0},     // the reference OP's userinfo at 50% (full-2026-12-06-j): rising at the end
		{[]float64{341, 261, 125}, 2, 1},              // draining
		{[]float64{2, 11, 35, 168}, 2, 0},             // a queue forming at the end of the ramp
		{[]float64{168, 120, 40, 38, 41}, 2, 2},       // drained: back at its calm
		{[]float64{168, 120, 40, 38, 41, 39}, 4, 4},   // and held there two seconds
		{[]float64{7, 7, 6, 5, 37, 30, 6, 5.5}, 2, 2}, // noisy, back at its calm
		{[]float64{7, 7, 3, 5, 37, 30, 9, 4}, 2, 1},   // still falling from a spike
		{[]float64{8.1, 6.2, 5.25, 4.4, 3.6}, 4, 3},   // falling slowly: each interval the new calm, those before above it
		{[]float64{8.1, 6.2, 5.25, 4.4, 3.6}, 2, 2},   // which two intervals do not show
		{[]float64{812, 967, 1218, 1453}, 2, 0},       // falling behind: never calm
		{[]float64{5}, 2, 1},                          // one interval: too few
		{[]float64{5, nan}, 2, 0},                     // the last without an answer
		{[]float64{5, nan, 5}, 2, 1},                  // one before it without
		{[]float64{}, 2, 0},
	} {
		if got := calmRun(tc.ms, tc.n, 50); got != tc.want {
			t.Errorf("calmRun(%v, %d) = %d, want %d", tc.ms, tc.n, got, tc.want)
		}
	}
}
