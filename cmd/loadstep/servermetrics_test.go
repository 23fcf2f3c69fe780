package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
)

// countingTarget is a discovery endpoint that counts its answers and a
// metrics endpoint that exposes the count as a Prometheus counter, noting
// when each scrape came and when each answer was counted, so that a test
// can tell exactly which answers a scrape's count holds.
type countingTarget struct {
	served  atomic.Int64
	mu      sync.Mutex
	scrapes []time.Time
	exposed []int64     // the count each scrape exposed, in the order they came
	counted []time.Time // when each answer was counted: the count is its index+1
}

func (ct *countingTarget) start(t *testing.T) (target, metrics string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"issuer":"http://op/"}`)
		ct.mu.Lock()
		ct.counted = append(ct.counted, time.Now())
		ct.served.Add(1)
		ct.mu.Unlock()
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("scrape sent an Authorization header")
		}
		ct.mu.Lock()
		n := ct.served.Load()
		ct.scrapes = append(ct.scrapes, time.Now())
		ct.exposed = append(ct.exposed, n)
		ct.mu.Unlock()
		fmt.Fprintf(w, "# TYPE served_total counter\nserved_total{path=\"/d\",code=\"200\"} %d\n", n)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/.well-known/openid-configuration", srv.URL + "/metrics"
}

func readStep(t *testing.T, path string) *schema.Step {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s schema.Step
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// TestServerMetricsEdges: the start scrape comes once the warmup is over,
// the end scrape after the window, the raw files lie beside the step and
// the server's count over them is loadstep's within what the edges
// explain: requests in flight at the start (one per connection, counted
// by the server after the start scrape but due before the window), and
// window requests the server answered before the start scrape read its
// count (the target's own log says how many; EdgeSlack estimates them
// from the step's mean qps, which a busy machine makes uneven, so the
// estimate is for the report, not a bound a test can hold it to).
func TestServerMetricsEdges(t *testing.T) {
	var ct countingTarget
	target, metrics := ct.start(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "discovery-c2.json")
	launch := time.Now()
	code, _, stderr := runArgs(context.Background(), "--url", target, "--scenario", "discovery", "-c", "2",
		"--warmup", "300ms", "--duration", "400ms", "--interval", "100ms",
		"--server-metrics", metrics, "--server-metrics-every", "150ms",
		"--server-metrics-select", `served_total{path="/d"}`, "--server-metrics-status-label", "code", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s := readStep(t, out)
	sm := s.ServerMetrics
	if sm == nil || len(sm.Scrapes) < 3 {
		t.Fatalf("server_metrics = %+v, want start, during and end scrapes", sm)
	}
	first, last := sm.Scrapes[0], sm.Scrapes[len(sm.Scrapes)-1]
	if first.Edge != schema.EdgeStart || last.Edge != schema.EdgeEnd {
		t.Fatalf("edges %s ... %s, want start ... end", first.Edge, last.Edge)
	}
	if first.At.Before(s.Start) || first.At.Sub(s.Start) > 200*time.Millisecond {
		t.Errorf("start scrape at %s, window start %s: want right after it", first.At, s.Start)
	}
	if first.At.Sub(launch) < 300*time.Millisecond {
		t.Errorf("start scrape %s after launch, inside the 300ms warmup", first.At.Sub(launch))
	}
	if last.At.Before(s.End) {
		t.Errorf("end scrape at %s, before the window's end %s", last.At, s.End)
	}
	ct.mu.Lock()
	got := len(ct.scrapes)
	ct.mu.Unlock()
	if got != len(sm.Scrapes) {
		t.Errorf("the server saw %d scrapes, the step records %d", got, len(sm.Scrapes))
	}
	for _, sc := range sm.Scrapes {
		if sc.Error != "" || sc.File == "" || sc.Bytes == 0 {
			t.Fatalf("scrape %+v: want a file", sc)
		}
		fi, err := os.Stat(filepath.Join(dir, sc.File))
		if err != nil || fi.Mode().Perm() != servermetrics.FileMode {
			t.Errorf("%s: %v, mode %v", sc.File, err, fi.Mode())
		}
	}
	if first.File != "discovery-c2.metrics.start.prom" || last.File != "discovery-c2.metrics.end.prom" {
		t.Errorf("files %s, %s", first.File, last.File)
	}
	if sm.Selector == nil || sm.Selector.Family != "served_total" || sm.Selector.StatusLabel != "code" {
		t.Errorf("selector %+v", sm.Selector)
	}
	start, err := servermetrics.ParseFile(filepath.Join(dir, first.File))
	if err != nil {
		t.Fatal(err)
	}
	end, err := servermetrics.ParseFile(filepath.Join(dir, last.File))
	if err != nil {
		t.Fatal(err)
	}
	w, err := servermetrics.Delta(start, end, servermetrics.FromRecord(sm.Selector))
	if err != nil {
		t.Fatal(err)
	}
	// The delta is the count the target exposed, exactly: a scrape of the
	// wrong edge, or a file not the one scraped, fails here.
	ct.mu.Lock()
	exposed, counted := ct.exposed, ct.counted
	ct.mu.Unlock()
	if w.Requests != exposed[len(exposed)-1]-exposed[0] {
		t.Errorf("server delta %d, the target exposed %d then %d", w.Requests, exposed[0], exposed[len(exposed)-1])
	}
	// Window requests counted before the start scrape read the count: those
	// counted after the window's start (less 1 ms of clock slew). A start
	// scrape taken before the window, or an end scrape before the drain,
	// or a loadstep that counts requests outside its window, puts the
	// difference outside [-early, connections].
	var early int64
	for _, at := range counted[:exposed[0]] {
		if !at.Before(s.Start.Add(-time.Millisecond)) {
			early++
		}
	}
	if d := w.Requests - s.Requests; d < -early || d > int64(s.Connections) {
		t.Errorf("server counted %d, loadstep %d: want loadstep's less at most %d (answered before the start scrape) "+
			"and at most %d more (in flight at the start)", w.Requests, s.Requests, early, s.Connections)
	}
	t.Logf("server %d, loadstep %d, %d answered in the window before the start scrape; EdgeSlack %d",
		w.Requests, s.Requests, early, servermetrics.EdgeSlack(s.Connections, s.QPS, s.Start, first))
	if w.ByStatus["200"] != w.Requests || w.Errors != 0 {
		t.Errorf("by status %v, errors %d", w.ByStatus, w.Errors)
	}
}

// TestServerMetricsFailures: an unreachable endpoint and a 500 are
// recorded with their error and said once on stderr; the step is complete.
func TestServerMetricsFailures(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/metrics"
	l.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)
	for name, tc := range map[string]struct{ url, want string }{
		"unreachable": {dead, "connection refused"},
		"status 500":  {broken.URL + "/metrics", "status 500"},
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "s.json")
			code, _, stderr := runArgs(context.Background(), "--url", discoveryServer(t), "--scenario", "discovery",
				"--warmup", "50ms", "--duration", "100ms", "--server-metrics", tc.url, "-o", out)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			s := readStep(t, out)
			if s.Status != schema.StatusComplete || s.ServerMetrics == nil || len(s.ServerMetrics.Scrapes) != 2 {
				t.Fatalf("status %s, server_metrics %+v", s.Status, s.ServerMetrics)
			}
			for _, sc := range s.ServerMetrics.Scrapes {
				if !strings.Contains(sc.Error, tc.want) || sc.File != "" {
					t.Errorf("scrape %+v: want error %q and no file", sc, tc.want)
				}
			}
			if n := strings.Count(stderr, "server metrics"); n != 1 {
				t.Errorf("stderr says it %d times, want once:\n%s", n, stderr)
			}
		})
	}
}

func TestServerMetricsUsage(t *testing.T) {
	base := []string{"--url", "http://127.0.0.1:1/", "--scenario", "discovery"}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"stdout without prefix": {[]string{"--server-metrics", "http://127.0.0.1:2/metrics"}, "--server-metrics-out"},
		"not http":              {[]string{"--server-metrics", "ftp://x/metrics", "-o", "x.json"}, "--server-metrics"},
		"every without url":     {[]string{"--server-metrics-every", "5s"}, "need --server-metrics"},
		"bad selector":          {[]string{"--server-metrics", "http://127.0.0.1:2/m", "-o", "x.json", "--server-metrics-select", "a{b=}"}, "--server-metrics-select"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := runArgs(context.Background(), append(base, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q: want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}
