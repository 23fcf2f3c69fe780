package load

import (
	"context"
	"net/url"
	"testing"
	"time"

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

// engines are the Senders every engine-level test runs on.
var engines = []string{EngineRaw, EngineNetHTTP}

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
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkConsistent(t, s)
	return s
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
	if total.TotalCount() != responses {
		t.Errorf("histogram holds %d values, %d responses were received", total.TotalCount(), responses)
	}
	if sum := schema.Summarize(total); sum != s.LatencyMS {
		t.Errorf("latency_ms %+v does not summarise the histogram (%+v)", s.LatencyMS, sum)
	}
	if s.Requests > 0 && s.LatencyModel != schema.ModelClosedLoop {
		t.Errorf("latency_model = %q", s.LatencyModel)
	}
}

func urlUser(name, password string) *url.Userinfo { return url.UserPassword(name, password) }
