package live

import (
	"context"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/idpbench/idpbench/internal/load"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
)

// scrape GETs url and parses the exposition.
func scrape(t *testing.T, url string) servermetrics.Families {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	fams, err := servermetrics.Parse(url, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// sample is the metric of family name whose labels are labels (name, value,
// ...), nil when there is none.
func sample(fams servermetrics.Families, name string, labels ...string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		match := len(got) == len(labels)/2
		for i := 0; match && i < len(labels); i += 2 {
			match = got[labels[i]] == labels[i+1]
		}
		if match {
			return m
		}
	}
	return nil
}

func serve(t *testing.T, m *Metrics) string {
	t.Helper()
	s, err := Listen("127.0.0.1:0", m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return "http://" + s.Addr().String() + "/metrics"
}

// TestMetrics: a scrape shows the last tick whole, under the documented
// names, types and labels.
func TestMetrics(t *testing.T) {
	m := New()
	url := serve(t, m)
	fams := scrape(t, url)
	if v := sample(fams, "idpbench_loadstep_phase", "phase", PhaseStarting); v.GetGauge().GetValue() != 1 {
		t.Errorf("before the first tick: phase %v, want starting", fams["idpbench_loadstep_phase"])
	}
	if v := sample(fams, "idpbench_loadstep_requests_total", "phase", "measured"); v == nil || v.GetCounter().GetValue() != 0 {
		t.Errorf("before the first tick: requests %v, want 0", v)
	}

	bounds := m.LatencyBounds()
	buckets := make([]int64, len(bounds))
	for i, b := range bounds {
		if b >= 2*time.Millisecond {
			buckets[i] = 8 // 8 values at most 2 ms, 2 beyond 60 s
		}
	}
	m.Tick(load.LiveFigures{At: time.Unix(1700000000, 0), Phase: load.LiveMeasured,
		Warmup:        load.LiveCounts{Requests: 50, Errors: schema.Errors{Socket: 1}},
		Window:        load.LiveCounts{Requests: 100, Errors: schema.Errors{Non2xx: 7, Timeout: 3}},
		ConnectErrors: schema.ConnectErrors{Refused: 4}, StatusCodes: map[int]int64{200: 90, 500: 7},
		Latency: load.LiveLatency{Buckets: buckets, Count: 10, Sum: 25 * time.Millisecond}, RatePerS: 123.5, CorrectedMS: 812})
	fams = scrape(t, url)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"idpbench_loadstep_requests_total", []string{"phase", "warmup"}, 50},
		{"idpbench_loadstep_requests_total", []string{"phase", "measured"}, 100},
		{"idpbench_loadstep_errors_total", []string{"phase", "measured", "class", "non2xx"}, 7},
		{"idpbench_loadstep_errors_total", []string{"phase", "measured", "class", "timeout"}, 3},
		{"idpbench_loadstep_errors_total", []string{"phase", "measured", "class", "check"}, 0},
		{"idpbench_loadstep_errors_total", []string{"phase", "warmup", "class", "socket"}, 1},
		{"idpbench_loadstep_connect_errors_total", []string{"cause", "refused"}, 4},
		{"idpbench_loadstep_responses_total", []string{"code", "500"}, 7},
	} {
		m := sample(fams, c.name, c.labels...)
		if m == nil || m.GetCounter().GetValue() != c.want {
			t.Errorf("%s%v = %v, want counter %v", c.name, c.labels, m, c.want)
		}
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"idpbench_loadstep_interval_requests_per_second", nil, 123.5},
		{"idpbench_loadstep_corrected_latency_mean_seconds", nil, 0.812},
		{"idpbench_loadstep_phase", []string{"phase", "measured"}, 1},
		{"idpbench_loadstep_phase", []string{"phase", "warmup"}, 0},
		{"idpbench_loadstep_last_tick_timestamp_seconds", nil, 1700000000},
	} {
		m := sample(fams, c.name, c.labels...)
		if m == nil || m.GetGauge().GetValue() != c.want {
			t.Errorf("%s%v = %v, want gauge %v", c.name, c.labels, m, c.want)
		}
	}
	h := sample(fams, "idpbench_loadstep_latency_seconds").GetHistogram()
	if h.GetSampleCount() != 10 || h.GetSampleSum() != 0.025 || len(h.GetBucket()) != len(bounds)+1 {
		t.Fatalf("latency histogram %v", h)
	}
	for _, b := range h.GetBucket() {
		want := uint64(0)
		switch {
		case math.IsInf(b.GetUpperBound(), 1):
			want = 10
		case b.GetUpperBound() >= 0.002:
			want = 8
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
	// A closed loop has no corrected latency: no gauge.
	m.Tick(load.LiveFigures{At: time.Unix(1700000001, 0), Phase: load.LiveMeasured, CorrectedMS: math.NaN()})
	if g := sample(scrape(t, url), "idpbench_loadstep_corrected_latency_mean_seconds"); g != nil {
		t.Errorf("corrected latency %v without one, want no gauge", g)
	}
	for name := range fams {
		if !strings.HasPrefix(name, "idpbench_loadstep_") {
			t.Errorf("family %s: want idpbench_loadstep_ names only", name)
		}
	}
}

// TestLatencyBounds: ascending, 100 µs to 60 s, every bound a 1-2-5 step.
func TestLatencyBounds(t *testing.T) {
	b := New().LatencyBounds()
	if b[0] != 100*time.Microsecond || b[len(b)-1] != 60*time.Second || len(b) != 18 {
		t.Errorf("bounds %v", b)
	}
	for i := 1; i < len(b); i++ {
		if b[i] <= b[i-1] {
			t.Errorf("bounds %v: not ascending at %d", b, i)
		}
	}
}

func TestCheckAddr(t *testing.T) {
	for _, c := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:9102", true}, {":9102", true}, {"localhost:0", true}, {"[::1]:9102", true},
		{"127.0.0.1", false}, {"9102", false}, {"127.0.0.1:http", false}, {"127.0.0.1:65536", false},
		{"127.0.0.1:", false}, {"http://127.0.0.1:9102", false}, {"127.0.0.1:-1", false},
	} {
		if err := CheckAddr(c.addr); (err == nil) != c.ok {
			t.Errorf("CheckAddr(%q) = %v, want ok %v", c.addr, err, c.ok)
		}
	}
}

// TestListenInUse: an address already taken fails at once; Close ends
// the server and frees it.
func TestListenInUse(t *testing.T) {
	m := New()
	s, err := Listen("127.0.0.1:0", m)
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().String()
	if _, err := Listen(addr, m); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second Listen on %s: %v, want address in use", addr, err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Errorf("%s still accepts after Close", addr)
	}
}

// BenchmarkScrape is one scrape as Prometheus or curl asks for it (gzip),
// of a tick with two status codes, served to a recorder: the driver's
// CPU per scrape, less the socket's.
func BenchmarkScrape(b *testing.B) {
	m := New()
	buckets := make([]int64, len(m.LatencyBounds()))
	for i := range buckets {
		buckets[i] = int64(1000 * (i + 1))
	}
	m.Tick(load.LiveFigures{At: time.Now(), Phase: load.LiveMeasured,
		Window:      load.LiveCounts{Requests: 2e6, Errors: schema.Errors{Non2xx: 12}},
		StatusCodes: map[int]int64{200: 2e6 - 12, 503: 12},
		Latency:     load.LiveLatency{Buckets: buckets, Count: 2e6, Sum: time.Hour}, RatePerS: 40000})
	h := m.Handler()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
