package load

import (
	"context"
	"math"
	"net/url"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/idpbench/idpbench/internal/pool"
	"github.com/idpbench/idpbench/internal/schema"
)

// testConfig is a short step: no warmup, 200 ms window, 2 connections.
func testConfig(t *testing.T, target, scenario string) *Config {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	return &Config{
		URL: u, Scenario: scenario, Connections: 2,
		Duration: 200 * time.Millisecond, Interval: 100 * time.Millisecond, Timeout: 2 * time.Second,
		PoolMode: PoolReuse,
	}
}

// engines are the engines every engine-level test runs on: epoll where
// it is available.
var engines = availableEngines()

func availableEngines() []string {
	if epollAvailable {
		return []string{EngineRaw, EngineEpoll, EngineNetHTTP}
	}
	return []string{EngineRaw, EngineNetHTTP}
}

// forEngines runs f as a subtest per engine.
func forEngines(t *testing.T, f func(t *testing.T, engine string)) {
	t.Helper()
	for _, eng := range engines {
		t.Run(eng, func(t *testing.T) { f(t, eng) })
	}
}

func testPool(name string, creds ...string) *pool.Pool {
	return &pool.Pool{Name: name, Header: map[string]string{"kind": "test"}, Creds: creds}
}

// mustRun validates and runs cfg.
func mustRun(t *testing.T, cfg *Config) *schema.Step {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	s, err := runOrFail(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkConsistent(t, s)
	return s
}

// runOrFail is Run, except that a Run that has not returned well after
// the step's own bound (warmup, window, and a drain bounded by the timeout)
// fails the test with every goroutine's stack: a hang is a failure, not a
// stuck test binary.
func runOrFail(t *testing.T, ctx context.Context, cfg *Config) (*schema.Step, error) {
	t.Helper()
	type result struct {
		s   *schema.Step
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := Run(ctx, cfg)
		done <- result{s, err}
	}()
	limit := max(cfg.Warmup, cfg.WarmupMax) + cfg.Duration + 2*cfg.Timeout + 30*time.Second
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.s, r.err
	case <-timer.C:
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("Run has not returned %s after it began (warmup %s, window %s, timeout %s); goroutines:\n%s",
			limit, cfg.Warmup, cfg.Duration, cfg.Timeout, buf)
		return nil, nil
	}
}

// checkConsistent asserts the invariants every step must hold: requests =
// ok + failed, intervals sum to the totals, histograms merge to the total.
func checkConsistent(t *testing.T, s *schema.Step) {
	t.Helper()
	if got := s.OK + s.Errors.Total(); got != s.Requests {
		t.Errorf("ok+failed = %d, requests = %d", got, s.Requests)
	}
	total, err := schema.DecodeHistogram(s.Histogram)
	if err != nil {
		t.Fatalf("step histogram: %v", err)
	}
	merged := schema.NewHistogram()
	var reqs, errs int64
	for i, iv := range s.Intervals {
		h, err := schema.DecodeHistogram(iv.Histogram)
		if err != nil {
			t.Fatalf("interval %d histogram: %v", i, err)
		}
		merged.Merge(h)
		reqs += iv.Requests
		errs += iv.Errors
	}
	if reqs != s.Requests || errs != s.Errors.Total() {
		t.Errorf("intervals sum to %d requests / %d errors, step has %d / %d", reqs, errs, s.Requests, s.Errors.Total())
	}
	if merged.TotalCount() != total.TotalCount() || merged.Max() != total.Max() {
		t.Errorf("merged intervals: count %d max %d, step histogram: count %d max %d",
			merged.TotalCount(), merged.Max(), total.TotalCount(), total.Max())
	}
	var responses int64
	for _, n := range s.StatusCodes {
		responses += n
	}
	// In an iteration step status_codes counts HTTP responses, the
	// histogram iterations (see checkFlowConsistent).
	if total.TotalCount() != responses && s.CountUnit != schema.CountIterations {
		t.Errorf("histogram holds %d values, %d responses were received", total.TotalCount(), responses)
	}
	if sum := schema.Summarize(total); sum != s.LatencyMS {
		t.Errorf("latency_ms %+v does not summarise the histogram (%+v)", s.LatencyMS, sum)
	}
	if s.RateRPS > 0 {
		checkCorrected(t, s, total)
		return
	}
	if s.Requests > 0 && s.LatencyModel != schema.ModelClosedLoop {
		t.Errorf("latency_model = %q", s.LatencyModel)
	}
	if s.CorrectedHistogram != "" || s.CorrectedLatencyMS != nil || s.Late != nil || s.LateMaxMS != nil {
		t.Errorf("closed-loop step carries rate-mode fields")
	}
}

// checkCorrected asserts the rate-mode invariants: the corrected histogram
// holds the same requests as the service-time one, each no shorter, and
// the intervals' corrected histograms and late counts add up to the step's.
func checkCorrected(t *testing.T, s *schema.Step, service *hdrhistogram.Histogram) {
	t.Helper()
	if s.LatencyModel != schema.ModelOpenLoop || s.CorrectedLatencyMS == nil || s.Late == nil || s.LateMaxMS == nil {
		t.Fatalf("rate step: latency_model %q, corrected_latency_ms %v, late %v, late_max_ms %v",
			s.LatencyModel, s.CorrectedLatencyMS, s.Late, s.LateMaxMS)
	}
	corr, err := schema.DecodeHistogram(s.CorrectedHistogram)
	if err != nil {
		t.Fatalf("corrected histogram: %v", err)
	}
	if corr.TotalCount() != service.TotalCount() || corr.Max() < service.Max() || corr.Min() < service.Min() {
		t.Errorf("corrected: count %d min %d max %d; service: count %d min %d max %d",
			corr.TotalCount(), corr.Min(), corr.Max(), service.TotalCount(), service.Min(), service.Max())
	}
	if sum := schema.Summarize(corr); sum != *s.CorrectedLatencyMS {
		t.Errorf("corrected_latency_ms %+v does not summarise the corrected histogram (%+v)", *s.CorrectedLatencyMS, sum)
	}
	merged := schema.NewHistogram()
	var late int64
	for i, iv := range s.Intervals {
		h, err := schema.DecodeHistogram(iv.CorrectedHistogram)
		if err != nil {
			t.Fatalf("interval %d corrected histogram: %v", i, err)
		}
		merged.Merge(h)
		late += iv.Late
	}
	if merged.TotalCount() != corr.TotalCount() || merged.Max() != corr.Max() || late != *s.Late {
		t.Errorf("intervals: corrected count %d max %d, late %d; step: %d, %d, %d",
			merged.TotalCount(), merged.Max(), late, corr.TotalCount(), corr.Max(), *s.Late)
	}
	if *s.Late > s.Requests || *s.LateMaxMS < 0 {
		t.Errorf("late %d of %d requests, late_max_ms %v", *s.Late, s.Requests, *s.LateMaxMS)
	}
}

func urlUser(name, password string) *url.Userinfo { return url.UserPassword(name, password) }

// sendRecord is one Send as a wrapping Sender saw it.
type sendRecord struct {
	due  time.Time // the request's intended time: the deadline less the timeout
	sent time.Time // Send was entered
	done time.Time // Send returned
}

// sendLog is a reference measurement taken on the client side of a step:
// it wraps the step's Senders and logs every Send. Its clock reads are a
// few µs from the engine's own (the engine reads the clock, builds the
// request and calls Send; it reads the clock again when Send returns), so
// the engine's figures must match the log's to within that, however noisy
// the machine: the machine's noise is in both.
type sendLog struct {
	timeout time.Duration
	mu      sync.Mutex
	recs    []sendRecord
}

// logSends makes c send through next, logging every Send.
func logSends(c *Config, next NewSenderFunc) *sendLog {
	l := &sendLog{timeout: c.Timeout, recs: make([]sendRecord, 0, 1<<14)}
	c.NewSender = func(i int) Sender { return loggedSender{next(i), l} }
	return l
}

func (l *sendLog) records() []sendRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.recs)
}

type loggedSender struct {
	Sender
	log *sendLog
}

func (s loggedSender) Send(r *Request, deadline time.Time) Response {
	sent := time.Now()
	resp := s.Sender.Send(r, deadline)
	done := time.Now()
	s.log.mu.Lock()
	s.log.recs = append(s.log.recs, sendRecord{deadline.Add(-s.log.timeout), sent, done})
	s.log.mu.Unlock()
	return resp
}

// summarize is schema.Summarize of the durations f gives for recs, so that
// a reference figure is computed by the same histogram and quantile rule as
// the step's.
func summarize(recs []sendRecord, f func(sendRecord) time.Duration) schema.Latency {
	h := schema.NewHistogram()
	for _, r := range recs {
		h.RecordValue(f(r).Nanoseconds())
	}
	return schema.Summarize(h)
}

// near reports whether a step's figure got (ms) matches the reference's
// want (ms) to within what separates their clock reads and the histogram's
// 3 significant digits: 1% and 0.2 ms.
func near(got, want float64) bool { return math.Abs(got-want) <= 0.01*want+0.2 }

// perInterval counts the records whose time at(r) falls in each of n
// intervals of the window from start: lo those a clear 1 ms inside one,
// hi also those that near an edge. The step's counts lie between: its
// attribution is by the same time (in a closed loop the log's due is the
// engine's own decision time, in rate mode its intended time), which only
// the wall clock's slew can move across an edge of the step's recorded
// start.
func perInterval(recs []sendRecord, start time.Time, interval time.Duration, n int, at func(sendRecord) time.Time) (lo, hi []int64) {
	lo, hi = make([]int64, n), make([]int64, n)
	for _, r := range recs {
		d := at(r).Sub(start)
		for i := range n {
			from, to := time.Duration(i)*interval, time.Duration(i+1)*interval
			if d >= from+time.Millisecond && d < to-time.Millisecond {
				lo[i]++
			}
			if d >= from-time.Millisecond && d < to+time.Millisecond {
				hi[i]++
			}
		}
	}
	return lo, hi
}

// within reports whether lo[i] <= got[i] <= hi[i] for every interval.
func within(got, lo, hi []int64) bool {
	if len(got) != len(lo) {
		return false
	}
	for i := range got {
		if got[i] < lo[i] || got[i] > hi[i] {
			return false
		}
	}
	return true
}
