package load

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	neturl "net/url"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// Fidelity tests: does loadstep measure what a server really does? They run
// loadstep's own engines (raw, and epoll in closed loop) against
// fidelityServer, whose behaviour is known exactly, and compare the step
// with what that behaviour implies. Timing on a shared 2-core machine is
// noisy, so what the machine decides is measured in the same run, alongside
// (a reference client, a client-side log of every Send, the server's own
// timestamps), and the engine's figures are judged against that; the
// stall test, whose model needs a server that kept to its plan, is retried
// (up to five attempts, then skipped with the reason) when the server's
// timestamps show it did not.

// fidelityServer is a raw TCP HTTP/1.1 server with a fixed service time: it
// answers each request (GET, no body) service after it arrived. With a
// stall, every request arriving in [T0, T0+stall) is held until T0+stall,
// where T0 is stallAfter after the first request arrived. It logs when each
// request arrived and when it was answered.
type fidelityServer struct {
	url               string
	service           time.Duration
	stallAfter, stall time.Duration

	mu    sync.Mutex
	first time.Time
	log   []served
}

// served is one request as the server saw it.
type served struct {
	conn     int // connection, in accept order
	arrived  time.Time
	planned  time.Time // when the server meant to answer
	answered time.Time
}

const fidelityBody = `{"issuer":"http://fidelity/"}`

func newFidelityServer(t *testing.T, service, stallAfter, stall time.Duration) *fidelityServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fidelityServer{url: "http://" + ln.Addr().String() + "/", service: service, stallAfter: stallAfter, stall: stall}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for n := 0; ; {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			id := n
			n++
			wg.Go(func() { s.serve(conn, id) })
		}
	})
	return s
}

func (s *fidelityServer) serve(conn net.Conn, id int) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	resp := []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		len(fidelityBody), fidelityBody))
	for {
		if err := readRequestHead(br); err != nil {
			return
		}
		arrived := time.Now()
		planned := s.plan(arrived)
		sleepPrecise(planned)
		answered := time.Now()
		if _, err := conn.Write(resp); err != nil {
			return
		}
		s.mu.Lock()
		s.log = append(s.log, served{id, arrived, planned, answered})
		s.mu.Unlock()
	}
}

// sleepPrecise waits until t to within a few µs: Go's timers fire up to a
// millisecond late (the runtime waits in epoll with ms resolution), so it
// sleeps to 2 ms short of t and spins, yielding, for the rest.
func sleepPrecise(t time.Time) {
	if d := time.Until(t) - 2*time.Millisecond; d > 0 {
		time.Sleep(d)
	}
	for time.Now().Before(t) {
		runtime.Gosched()
	}
}

// plan is when a request arriving at t is to be answered.
func (s *fidelityServer) plan(t time.Time) time.Time {
	s.mu.Lock()
	if s.first.IsZero() {
		s.first = t
	}
	from := s.first.Add(s.stallAfter)
	s.mu.Unlock()
	if s.stall > 0 && !t.Before(from) && t.Before(from.Add(s.stall)) {
		return from.Add(s.stall)
	}
	return t.Add(s.service)
}

// readRequestHead reads one request head (the tests send no bodies).
func readRequestHead(br *bufio.Reader) error {
	for {
		l, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(l) <= 2 {
			return nil
		}
	}
}

func (s *fidelityServer) served() []served {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// starvation is what the server's own timestamps may show about a run; a
// zero bound is not checked.
type starvation struct {
	medianLate time.Duration // the server's median lateness against its plan
	maxLate    time.Duration // the server's largest lateness
	turnaround time.Duration // median time from an answer to the next request on that connection
	gap        time.Duration // longest time without arrivals, outside a stall
}

// starved says why the server's own timestamps show a starved machine ("" if
// they do not), against the bounds in b.
func (s *fidelityServer) starved(b starvation) string {
	log := s.served()
	if len(log) == 0 {
		return "no requests arrived"
	}
	lates := make([]time.Duration, len(log))
	for i, r := range log {
		lates[i] = r.answered.Sub(r.planned)
	}
	slices.Sort(lates)
	switch {
	case b.medianLate > 0 && lates[len(lates)/2] > b.medianLate:
		return fmt.Sprintf("the server answered %s after its planned time (median)", lates[len(lates)/2])
	case b.maxLate > 0 && lates[len(lates)-1] > b.maxLate:
		return fmt.Sprintf("the server answered %s after its planned time (max)", lates[len(lates)-1])
	}
	if b.turnaround > 0 {
		if t := s.turnaround(log); t > b.turnaround {
			return fmt.Sprintf("the next request came %s after an answer (median)", t)
		}
	}
	if b.gap > 0 {
		return s.gapIn(log, b.gap)
	}
	return ""
}

// turnaround is the median time from an answer to the next request on the
// same connection.
func (s *fidelityServer) turnaround(log []served) time.Duration {
	var ts []time.Duration
	last := map[int]time.Time{}
	for _, r := range log { // in answer order per connection
		if at, ok := last[r.conn]; ok {
			ts = append(ts, r.arrived.Sub(at))
		}
		last[r.conn] = r.answered
	}
	if len(ts) == 0 {
		return 0
	}
	slices.Sort(ts)
	return ts[len(ts)/2]
}

// gapIn reports the first time no request arrived for longer than maxGap,
// outside the stall.
func (s *fidelityServer) gapIn(log []served, maxGap time.Duration) string {
	arrivals := make([]time.Time, len(log))
	for i, r := range log {
		arrivals[i] = r.arrived
	}
	slices.SortFunc(arrivals, func(a, b time.Time) int { return a.Compare(b) })
	from := s.first.Add(s.stallAfter)
	for i := 1; i < len(arrivals); i++ {
		gap := arrivals[i].Sub(arrivals[i-1])
		inStall := s.stall > 0 && arrivals[i].After(from) && arrivals[i-1].Before(from.Add(s.stall+maxGap))
		if gap > maxGap && !inStall {
			return fmt.Sprintf("no request arrived for %s at %s", gap, arrivals[i-1].Sub(s.first))
		}
	}
	return ""
}

// unstarved runs measure until starved (evaluated on the server it returns)
// reports nothing, and returns that step. A starved attempt is discarded and
// the next one waits a little longer, for the machine to quieten (2, 4, 6,
// 8 s). When every attempt was starved the test is skipped with what the
// server saw: the model needs a server that kept to its plan, and a machine
// that could not keep a 1 ms schedule for 3 s says nothing about the engine.
// The skip is decided by the server's own timestamps, never by a guess.
func unstarved(t *testing.T, measure func() (*schema.Step, string)) *schema.Step {
	t.Helper()
	const attempts = 5
	for attempt := 1; ; attempt++ {
		s, why := measure()
		if why == "" {
			return s
		}
		if attempt == attempts {
			t.Skipf("the machine was starved in all %d attempts (last: %s): the stall model cannot be judged on it now", attempts, why)
		}
		t.Logf("attempt %d discarded: the machine was starved: %s", attempt, why)
		time.Sleep(time.Duration(2*attempt) * time.Second)
	}
}

// TestFidelityServiceTime: closed loop, 2 connections, a server that takes
// exactly 5 ms. What the engine controls is that it times each request from
// its send to its complete response: never below the service time (the
// server holds every request 5 ms after its head arrived), and above it by
// no more than loopback, the kernel and the scheduler add, which the
// machine decides. So a reference client (a plain net.Conn sending the same
// request one at a time, on a third connection to the same server, in the
// same window) measures that overhead alongside, and loadstep's P50 may
// exceed the service time by at most twice the reference's overhead plus
// 0.2 ms. Catches latency taken from a wrong timestamp: one too late (the
// write or the response head only: below 5 ms), one too early or a wrong
// unit (a request's turnaround or the previous request counted in: +5 ms).
// The figures stay labelled as service time under N outstanding requests.
func TestFidelityServiceTime(t *testing.T) {
	for _, engine := range engines {
		if engine != EngineNetHTTP {
			t.Run(engine, func(t *testing.T) { testFidelityServiceTime(t, engine) })
		}
	}
}

func testFidelityServiceTime(t *testing.T, engine string) {
	const service, conns = 5 * time.Millisecond, 2
	// No retry on a starved machine: the reference measures the same
	// starvation in the same window.
	srv := newFidelityServer(t, service, 0, 0)
	c := testConfig(t, srv.url, schema.ScenarioDiscovery)
	c.Engine, c.Connections, c.Warmup, c.Duration, c.Interval = engine, conns, 100*time.Millisecond, 800*time.Millisecond, 400*time.Millisecond
	stop := make(chan struct{})
	refc := refClient(t, srv.url, stop)
	s := mustRun(t, c)
	close(stop)
	ref := <-refc
	if ref.Count == 0 {
		t.Fatal("the reference client failed")
	}
	t.Logf("P50 %.3f ms, P99 %.3f ms; reference client P50 %.3f ms (%d requests)", s.LatencyMS.P50, s.LatencyMS.P99, ref.P50, ref.Count)
	serviceMS := service.Seconds() * 1000
	overhead := max(ref.P50-serviceMS, 0)
	if p50 := s.LatencyMS.P50; p50 < serviceMS || p50 > serviceMS+2*overhead+0.2 {
		t.Errorf("P50 = %.3f ms, want within [%.1f, %.3f] ms: the service time plus at most twice the %.3f ms the reference client measured above it, plus 0.2 ms",
			p50, serviceMS, serviceMS+2*overhead+0.2, overhead)
	}
	if s.LatencyMS.Min < serviceMS {
		t.Errorf("min = %.3f ms: below the server's service time", s.LatencyMS.Min)
	}
	if s.LatencyModel != schema.ModelClosedLoop || s.CorrectedHistogram != "" {
		t.Errorf("latency_model %q, corrected histogram present %v: want closed-loop service time only",
			s.LatencyModel, s.CorrectedHistogram != "")
	}
	// 2 connections each about as busy as the reference's one: the step's
	// rate is about twice the reference's (a driver that idles between
	// requests would fall short), and no request failed.
	if perConn := float64(s.Requests) / conns / s.End.Sub(s.Start).Seconds(); perConn < 0.5*ref.RPS || s.Errors.Total() != 0 {
		t.Errorf("%d requests (%.0f/s per connection; the reference client %.0f/s), %d errors", s.Requests, perConn, ref.RPS, s.Errors.Total())
	}
}

// refLatency is what the reference client measured.
type refLatency struct {
	schema.Latency
	Count int
	RPS   float64 // requests per second it completed
}

// refClient sends GET / to url over one connection, one request at a time,
// until stop is closed, and then sends what it measured: latency from the
// write to the end of the response body.
func refClient(t *testing.T, url string, stop <-chan struct{}) <-chan refLatency {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan refLatency, 1)
	go func() {
		defer conn.Close()
		req := []byte("GET / HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n")
		br := bufio.NewReader(conn)
		h := schema.NewHistogram()
		begin := time.Now()
		for {
			select {
			case <-stop:
				out <- refLatency{schema.Summarize(h), int(h.TotalCount()), float64(h.TotalCount()) / time.Since(begin).Seconds()}
				return
			default:
			}
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			sent := time.Now()
			if _, err := conn.Write(req); err != nil {
				out <- refLatency{}
				return
			}
			resp, err := http.ReadResponse(br, nil)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if err != nil {
				out <- refLatency{}
				return
			}
			h.RecordValue(time.Since(sent).Nanoseconds())
		}
	}()
	return out
}

// TestFidelityStall: rate mode against a server that answers at once
// except for one 1 s stall in the middle of a 3 s window.
//
// Derivation of the expected corrected latencies. The schedule is R
// requests/s evenly spaced, n/R for n = 0 .. R*D-1 over the window D (no
// warmup), connection i taking every c-th. The stall [T0, T0+S) lies inside
// the window. A request intended at t outside the stall is answered at once:
// its corrected latency is about the service time, ~0. A request intended at
// t = T0+u inside the stall cannot complete before T0+S: either it reached
// the server during the stall and is held, or its connection is still
// waiting for an earlier request that is held, and sends it, back to back
// with the rest of its backlog, once that returns at T0+S. So its corrected
// latency is T0+S - t = S-u (plus the catch-up: the u*R/c requests queued
// before it on its connection, each one loopback turnaround e of ~0.1-0.5 ms,
// which adds u*(R/c)*e <= 5% of u at R/c = 100/s, under 2 ms at the P99).
// Intended times are uniform, so a fraction f = S/D of the requests has
// latency uniform on (0, S] and the rest ~0:
//
//	P(L > x) = f * (1 - x/S)         for 0 < x <= S
//	x_q      = S - (1-q)*D           for a quantile q above 1-f
//
// With S = 1 s, D = 3 s: P99 = 0.97 s, P90 = 0.70 s. The service-time
// histogram, measured from the actual send, sees the stall only in the one
// request per connection that was in flight when it began (c of R*D
// requests, 0.33% here): its P99 stays at the loopback service time while
// its max is about S. Every request intended in the stall but the first
// per connection is sent late: R*S - c of them, the first ~S late.
func TestFidelityStall(t *testing.T) {
	const (
		rate  = 400.0
		conns = 4
		stall = time.Second
		dur   = 3 * time.Second
	)
	var sends []sendRecord
	s := unstarved(t, func() (*schema.Step, string) {
		srv := newFidelityServer(t, 0, time.Second, stall)
		c := testConfig(t, srv.url, schema.ScenarioDiscovery)
		c.Engine, c.Connections, c.Rate, c.Duration, c.Interval, c.Timeout = EngineRaw, conns, rate, dur, time.Second, 5*time.Second
		log := logSends(c, NewRawSender(c.Timeout))
		s := mustRun(t, c)
		sends = log.records()
		return s, srv.starved(starvation{maxLate: 50 * time.Millisecond, gap: 200 * time.Millisecond})
	})
	n := int64(rate * dur.Seconds())
	if s.Requests != n || int64(len(sends)) != n || s.Errors.Total() != 0 {
		t.Fatalf("%d requests (%d sent), %d errors: want %d intended in the window, all sent and answered",
			s.Requests, len(sends), s.Errors.Total(), n)
	}
	corr := s.CorrectedLatencyMS
	S, D := stall.Seconds()*1000, dur.Seconds()*1000 // ms
	within := func(got, want, tol float64) bool { return math.Abs(got-want) <= tol*want }

	// Against the client-side reference: the corrected latency runs from
	// the intended time, the service time from the actual send. Catches
	// either measured from the other's timestamp (corrected P99 ~1 ms, or
	// service P99 ~970 ms) or a wrong unit.
	refCorr := summarize(sends, func(r sendRecord) time.Duration { return r.done.Sub(r.due) })
	refServ := summarize(sends, func(r sendRecord) time.Duration { return r.done.Sub(r.sent) })
	for _, f := range []struct {
		what      string
		got, want float64
	}{
		{"corrected P50", corr.P50, refCorr.P50}, {"corrected P90", corr.P90, refCorr.P90},
		{"corrected P99", corr.P99, refCorr.P99}, {"corrected max", corr.Max, refCorr.Max},
	} {
		if !near(f.got, f.want) {
			t.Errorf("%s = %.2f ms; the client-side reference measured %.2f ms", f.what, f.got, f.want)
		}
	}
	// The engine starts the service-time clock before it builds the
	// request, the log after: a preemption in between shows at the P99 of a
	// ~1 ms figure, so the bound above is looser, but far below the ~970 ms
	// of a service time taken from the intended time.
	if g, w := s.LatencyMS.P99, refServ.P99; g < w-0.2 || g > 1.5*w+0.5 || !near(s.LatencyMS.Max, refServ.Max) {
		t.Errorf("service P99 %.2f max %.1f ms; the client-side reference measured %.2f, %.1f ms", g, s.LatencyMS.Max, w, refServ.Max)
	}
	// Against the model: the stall did what the derivation says (the
	// machine's catch-up adds a few % at most). Catches a test whose stall
	// did not happen, and an engine that thins the load instead of
	// catching up (its corrected P99 would be far below S).
	want := func(q float64) float64 { return S - (1-q)*D }
	// A slow machine only adds to the catch-up, which the reference above
	// judges; the model bounds the figures from below.
	if corr.P99 < 0.9*want(0.99) || corr.P90 < 0.9*want(0.90) || corr.Max < 0.9*S {
		t.Errorf("corrected P90 %.1f P99 %.1f max %.1f ms, want at least 90%% of %.1f, %.1f, %.0f ms (S - (1-q) D)",
			corr.P90, corr.P99, corr.Max, want(0.90), want(0.99), S)
	}
	if !within(s.LatencyMS.Max, S, 0.10) {
		t.Errorf("service time max %.1f ms, want ~%.0f ms: the requests in flight when the stall began", s.LatencyMS.Max, S)
	}

	// Late: a request sent more than the threshold after its intended
	// time. The engine reads the clock before the log does, by the few µs
	// of building the request, so its count lies between the log's counts
	// at the threshold plus 1 ms and at the threshold; the machine's
	// noise is in both. Catches a wrong threshold or unit, lateness taken
	// from the wrong timestamp, and a count off by more than the requests
	// sent 2-3 ms late. The stall itself makes R*S - c requests late
	// whatever the machine does, so fewer is wrong too.
	lateIn := func(recs []sendRecord, over time.Duration) (n int64, maxDelay time.Duration) {
		for _, r := range recs {
			d := r.sent.Sub(r.due)
			if d > over {
				n++
			}
			maxDelay = max(maxDelay, d)
		}
		return n, maxDelay
	}
	hi, maxDelay := lateIn(sends, lateThreshold)
	lo, _ := lateIn(sends, lateThreshold+time.Millisecond)
	if late := *s.Late; late < lo || late > hi || float64(late) < 0.9*(rate*stall.Seconds()-conns) {
		t.Errorf("late %d: the client-side reference counts %d to %d; the stall alone makes about %.0f late",
			late, lo, hi, rate*stall.Seconds()-conns)
	}
	if ref := float64(maxDelay) / 1e6; *s.LateMaxMS > ref || *s.LateMaxMS < ref-1 || !within(*s.LateMaxMS, S, 0.10) {
		t.Errorf("late max %.2f ms; the reference's largest delay %.2f ms; the stall's ~%.0f ms", *s.LateMaxMS, ref, S)
	}

	// Attribution by intended time: each interval holds exactly the
	// requests intended in it, with the lateness the reference shows for
	// them. The stall begins a few ms into [1 s, 2 s) (when the first
	// request arrived plus 1 s), so that interval's corrected latency is
	// uniform on (0, S] (median S/2) and the first interval sees almost
	// none of it: only the requests intended in its last ms that a busy
	// machine had not answered when the stall began (their corrected
	// latency is up to S, which the reference judges), never its median.
	// Catches attribution by send or completion time (the stall's
	// backlog, sent after 2 s, would land in the third interval).
	begin := sends[0].due
	for _, r := range sends {
		begin = minTime(begin, r.due) // request 0 is intended at the window's start
	}
	iv := s.Intervals
	if len(iv) != 3 {
		t.Fatalf("%d intervals, want 3", len(iv))
	}
	for k := range iv {
		in := inInterval(sends, begin, k)
		hi, _ := lateIn(in, lateThreshold)
		lo, _ := lateIn(in, lateThreshold+time.Millisecond)
		ref := summarize(in, func(r sendRecord) time.Duration { return r.done.Sub(r.due) })
		if iv[k].Requests != int64(len(in)) || iv[k].Late < lo || iv[k].Late > hi || !near(iv[k].CorrectedMaxMS, ref.Max) {
			t.Errorf("interval %d: %d requests, %d late, corrected max %.1f ms; the reference: %d intended in it, %d to %d late, max %.1f ms",
				k, iv[k].Requests, iv[k].Late, iv[k].CorrectedMaxMS, len(in), lo, hi, ref.Max)
		}
	}
	ref1 := summarize(inInterval(sends, begin, 1), func(r sendRecord) time.Duration { return r.done.Sub(r.due) })
	if iv[1].CorrectedP50MS < 0.9*S/2 || !near(iv[1].CorrectedP50MS, ref1.P50) || float64(iv[1].Late) < 0.95*float64(iv[1].Requests) || iv[0].CorrectedP50MS > S/10 {
		t.Errorf("intervals: want the stall in the second only (corrected P50 ~%.0f ms, reference %.1f ms, all late): "+
			"corrected P50 %.1f/%.1f/%.1f ms, max %.1f/%.1f/%.1f ms, late %d/%d/%d of %d/%d/%d", S/2, ref1.P50,
			iv[0].CorrectedP50MS, iv[1].CorrectedP50MS, iv[2].CorrectedP50MS, iv[0].CorrectedMaxMS, iv[1].CorrectedMaxMS, iv[2].CorrectedMaxMS,
			iv[0].Late, iv[1].Late, iv[2].Late, iv[0].Requests, iv[1].Requests, iv[2].Requests)
	}
	t.Logf("corrected P50 %.2f P90 %.1f P99 %.1f max %.1f ms; service P99 %.2f max %.1f ms; late %d (reference %d-%d) max %.1f ms",
		corr.P50, corr.P90, corr.P99, corr.Max, s.LatencyMS.P99, s.LatencyMS.Max, *s.Late, lo, hi, *s.LateMaxMS)
}

// inInterval is the records intended in the k-th second from begin.
func inInterval(recs []sendRecord, begin time.Time, k int) []sendRecord {
	var in []sendRecord
	for _, r := range recs {
		if int(r.due.Sub(begin)/time.Second) == k {
			in = append(in, r)
		}
	}
	return in
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// TestRateAccuracy: at 2000 requests/s for 2 s (after a 200 ms warmup)
// against a fast server. What the engine controls is the schedule: exactly
// R*D requests intended in the window, each sent once, none before its
// time. When each goes out within the window the machine decides too: a
// send delayed across an edge of the window moves a request out of it (or
// into it from the warmup). So a client-side log of every Send is kept as
// the reference, and the rate the server saw in the window must be within
// 1% of the rate asked for plus what the log shows the machine moved across
// the edges. Catches a schedule off by 1% or more (R*D intended requests,
// exactly), requests counted but not sent or sent twice (the server's
// count against the log), and sends ahead of their time.
func TestRateAccuracy(t *testing.T) {
	const rate, warmup, dur = 2000.0, 200 * time.Millisecond, 2 * time.Second
	srv := newFidelityServer(t, 0, 0, 0)
	c := testConfig(t, srv.url, schema.ScenarioDiscovery)
	c.Engine, c.Connections, c.Rate, c.Warmup, c.Duration, c.Interval = EngineRaw, 4, rate, warmup, dur, time.Second
	log := logSends(c, NewRawSender(c.Timeout))
	s := mustRun(t, c)
	sends, served := log.records(), srv.served()
	if len(sends) == 0 {
		t.Fatal("nothing sent")
	}
	launch := sends[0].due
	for _, r := range sends {
		launch = minTime(launch, r.due) // request 0 is intended at the launch
	}
	start, end := launch.Add(warmup), launch.Add(warmup+dur)
	in := func(t time.Time) bool { return !t.Before(start) && t.Before(end) }
	var intended, crossed, early, seen int
	for _, r := range sends {
		if in(r.due) {
			intended++
		}
		if in(r.due) != in(r.sent) { // sent late across an edge of the window
			crossed++
		}
		if r.sent.Before(r.due) {
			early++
		}
	}
	for _, r := range served {
		if in(r.arrived) {
			seen++
		}
	}
	want := int(rate * dur.Seconds())
	if s.Requests != int64(want) || intended != want || s.QPS != rate || s.RateRPS != rate || s.Errors.Total() != 0 {
		t.Errorf("step: %d requests, qps %.1f, rate_rps %v, %d errors; %d sends intended in the window: want %d",
			s.Requests, s.QPS, s.RateRPS, s.Errors.Total(), intended, want)
	}
	if len(served) != len(sends) || early != 0 || len(sends) != int(rate*(warmup+dur).Seconds()) {
		t.Errorf("%d sent (%d before their time), the server answered %d: want %d, each once, none early",
			len(sends), early, len(served), int(rate*(warmup+dur).Seconds()))
	}
	moved := float64(crossed) / float64(want) // the machine's doing
	achieved := float64(seen) / dur.Seconds()
	if off := math.Abs(achieved/rate - 1); off > 0.01+moved {
		t.Errorf("the server saw %.1f requests/s in the window, want %.0f ± %.2f%% (1%% and the %.2f%% the machine moved across its edges)",
			achieved, rate, 100*(0.01+moved), 100*moved)
	}
	t.Logf("achieved %.1f requests/s at the server (%.3f%% off; %.3f%% moved across the edges by late sends), late %d, late max %.2f ms",
		achieved, 100*(achieved/rate-1), 100*moved, *s.Late, *s.LateMaxMS)
}
