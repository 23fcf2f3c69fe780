package load

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// TestRateSchedule: the connections' schedules interleave into one evenly
// spaced stream (each connection offset by 1/R), and the window holds
// exactly the requests intended in it, whatever the warmup sent. Catches
// missing phase offsets, a schedule that drifts or accumulates, and
// attribution by anything but the intended time.
func TestRateSchedule(t *testing.T) {
	const rate = 100.0
	c, sends := fakeConfig(t, 0)
	c.Connections, c.Rate = 4, rate
	c.Warmup, c.Duration, c.Interval = 200*time.Millisecond, 400*time.Millisecond, 200*time.Millisecond
	log := logSends(c, c.NewSender)
	s := mustRun(t, c)
	if s.Requests != 40 || s.RateRPS != rate || s.QPS != rate {
		t.Errorf("%d requests, rate_rps %v, qps %v: want the 40 intended in the 400 ms window at %v/s", s.Requests, s.RateRPS, s.QPS, rate)
	}
	if per := []int64{s.Intervals[0].Requests, s.Intervals[1].Requests}; per[0] != 20 || per[1] != 20 {
		t.Errorf("requests per interval %v, want [20 20] (attributed by intended time)", per)
	}
	// The intended times are what the engine controls: over the whole
	// step they are one sequence 10 ms apart, exactly. Without the phase
	// offsets the 4 connections would be due together (3 of every 4 gaps
	// 0). When the sends happen after them is the machine's business, but
	// never before.
	recs := log.records()
	if len(recs) != 60 || len(sends()) != 60 {
		t.Fatalf("%d sends logged, %d sent: want 60 (20 in the warmup, 40 in the window)", len(recs), len(sends()))
	}
	slices.SortFunc(recs, func(a, b sendRecord) int { return a.due.Compare(b.due) })
	for i, r := range recs {
		if gap := r.due.Sub(recs[max(i-1, 0)].due); i > 0 && gap.Round(time.Microsecond) != 10*time.Millisecond || r.sent.Before(r.due) {
			t.Errorf("send %d: intended %s after the one before, sent %s after its time: want 10ms, never early", i, gap, r.sent.Sub(r.due))
		}
	}
}

// TestRateCatchUp: a connection whose responses take 25 ms cannot keep a
// 10 ms schedule. It sends back to back (no sleeping) until the 20 requests
// intended in the 200 ms window are all sent, and the corrected latency
// grows with the backlog while the service time stays what the sender took.
func TestRateCatchUp(t *testing.T) {
	const service = 25 * time.Millisecond
	c, _ := fakeConfig(t, service)
	c.Connections, c.Rate, c.Duration = 1, 100, 200*time.Millisecond
	log := logSends(c, c.NewSender)
	s := mustRun(t, c)
	recs := log.records()
	if s.Requests != 20 || len(recs) != 20 || s.OK != 20 {
		t.Fatalf("%d requests (%d ok), %d sent: want all 20 intended in the window sent, after its end if need be", s.Requests, s.OK, len(recs))
	}
	// The intended times never move: 10 ms apart from the first, however
	// late the sends. Each response comes at least 25 ms after its send, so
	// from the second request on the connection is behind: it must send on
	// at once, not wait. What a starved machine adds between a return and
	// the next send is an occasional stall; the median of the 19 gaps is
	// the engine's own, a few µs, against the 10 ms a connection pacing
	// itself from its last response would wait.
	gaps := make([]time.Duration, 0, len(recs)-1)
	for i, r := range recs {
		if want := recs[0].due.Add(time.Duration(i) * 10 * time.Millisecond); r.due.Sub(want).Abs() > time.Microsecond || r.sent.Before(r.due) {
			t.Errorf("send %d: intended %s after the first, sent %s after its time: want %d×10ms, never early",
				i, r.due.Sub(recs[0].due), r.sent.Sub(r.due), i)
		}
		if i > 0 {
			gaps = append(gaps, r.sent.Sub(recs[i-1].done))
		}
	}
	slices.Sort(gaps)
	if med := gaps[len(gaps)/2]; med > 5*time.Millisecond {
		t.Errorf("median %s from a response to the next send (all %v): a connection behind its schedule must not wait", med, gaps)
	}
	// The step's figures are the log's: service time from send to return,
	// corrected from the intended time to return, late from the intended
	// time to the send. The model bounds them from below (request k ends
	// no earlier than 25(k+1) ms for an intended 10k ms); a slow machine
	// only adds, which the log measured too. The engine reads its clocks
	// just outside the logged Send, so its times enclose the log's: a
	// preemption between the two reads lengthens one request by
	// milliseconds (seen: service P99 28.0 ms against the log's 25.7), so
	// the tail is held from below by the log and from above by the
	// backlog: a service time taken from the intended time (the
	// corrected one) would put the P99 near 300 ms, above the log's
	// corrected median (~175 ms). The median and the minimum, which one
	// stall cannot move, stay the log's.
	svc := summarize(recs, func(r sendRecord) time.Duration { return r.done.Sub(r.sent) })
	corr := summarize(recs, func(r sendRecord) time.Duration { return r.done.Sub(r.due) })
	late := summarize(recs, func(r sendRecord) time.Duration { return r.sent.Sub(r.due) })
	got, lat := s.CorrectedLatencyMS, s.LatencyMS
	atLeast := func(got, want float64) bool { return got >= want-(0.01*want+0.2) }
	if !atLeast(got.Max, corr.Max) || got.Max > 2*corr.Max || got.Max < 310 ||
		!atLeast(lat.P99, svc.P99) || lat.P99 > corr.P50 || !near(lat.P50, svc.P50) || lat.Min < 25 || !near(lat.Min, svc.Min) {
		t.Errorf("corrected max %.1f ms, service P99 %.1f P50 %.1f min %.1f ms; the send log: corrected max %.1f P50 %.1f, service P99 %.1f P50 %.1f min %.1f ms (corrected at least 310, service at least 25)",
			got.Max, lat.P99, lat.P50, lat.Min, corr.Max, corr.P50, svc.P99, svc.P50, svc.Min)
	}
	// All but the first are far behind (15 ms and more); the first is late
	// only if the machine sent it more than the threshold after its time,
	// which the log's later clock read sees first.
	wantLate := int64(19)
	if d := recs[0].sent.Sub(recs[0].due); d > lateThreshold {
		wantLate = 20
	}
	if *s.Late < 19 || *s.Late > wantLate || *s.LateMaxMS < 285 || !near(*s.LateMaxMS, late.Max) {
		t.Errorf("late %d, max %.1f ms: want 19 (all but the first) up to %d, max at least 285 ms and the log's %.1f ms",
			*s.Late, *s.LateMaxMS, wantLate, late.Max)
	}
}

// slowSender answers after a fixed time, ignoring the deadline, as a
// misbehaving engine or a starved driver would.
type slowSender struct {
	latency time.Duration
	sent    *int
	mu      *sync.Mutex
}

func (s slowSender) Send(*Request, time.Time) Response {
	s.mu.Lock()
	*s.sent++
	s.mu.Unlock()
	time.Sleep(s.latency)
	return Response{Status: 200, Body: []byte(`{"issuer":"x"}`)}
}

func (slowSender) Close() {}

// TestRateUnsentTimeouts: a request whose intended time plus the timeout
// has passed before its connection is free is not sent; it counts as a
// timeout (and as late), and the connection moves on to its schedule.
func TestRateUnsentTimeouts(t *testing.T) {
	c, _ := fakeConfig(t, 0)
	var mu sync.Mutex
	var sent int
	c.NewSender = func(int) Sender { return slowSender{100 * time.Millisecond, &sent, &mu} }
	c.Connections, c.Rate, c.Duration, c.Timeout = 1, 100, 100*time.Millisecond, 30*time.Millisecond
	s := mustRun(t, c)
	mu.Lock()
	defer mu.Unlock()
	if s.Requests != 10 || int64(sent)+s.Errors.Timeout != s.Requests || s.Errors.Timeout < 5 || s.OK < 1 {
		t.Errorf("%d requests, %d sent, %d ok, %d timeouts: want 10 intended, the unsendable ones counted as timeouts",
			s.Requests, sent, s.OK, s.Errors.Timeout)
	}
	if *s.Late < s.Errors.Timeout {
		t.Errorf("late %d < %d timed out unsent", *s.Late, s.Errors.Timeout)
	}
}

// TestRateInterrupt: a connection asleep until its next intended time
// wakes for a cancel at once. The second connection's first request is
// due 10 s in: an engine that sleeps through the cancel returns no earlier,
// one that wakes returns after its setup and the drain of nothing, which a
// starved machine has been seen to stretch to 1 s; half the wait holds
// either apart.
func TestRateInterrupt(t *testing.T) {
	const asleep = 10 * time.Second
	c, sends := fakeConfig(t, 0)
	c.Rate, c.Duration = 1/asleep.Seconds(), 3*asleep // connection i is first due at i/rate
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	begin := time.Now()
	s, err := runOrFail(t, ctx, c)
	took := time.Since(begin)
	if err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, s)
	if took > asleep/2 || s.Status != schema.StatusInterrupted || s.Requests != 1 || len(sends()) != 1 {
		t.Errorf("took %s, status %s, %d requests (%d sent): want interrupted well before the next request due at %s, with the one due at 0",
			took, s.Status, s.Requests, len(sends()), asleep)
	}
}

func TestIntendedTimes(t *testing.T) {
	p := plan{launch: time.Unix(1000, 0), rate: 3}
	for _, n := range []int64{0, 1, 2, 3, 3_000_000_000} {
		want := time.Unix(1000, 0).Add(time.Duration(math.Round(float64(n) / 3 * 1e9)))
		if got := p.intended(n); got.Sub(want).Abs() > time.Nanosecond {
			t.Errorf("intended(%d) = %s, want %s", n, got.Sub(p.launch), want.Sub(p.launch))
		}
	}
}
