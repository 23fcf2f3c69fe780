package servermetrics

import (
	"math"
	"strings"
	"testing"
)

func parse(t *testing.T, text string) Families {
	t.Helper()
	f, err := Parse("test.prom", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Shaped like Keycloak 26.7.3's management /metrics with
// --http-metrics-histograms-enabled=true (buckets in seconds).
const kcStart = `# TYPE http_server_requests_seconds histogram
http_server_requests_seconds_bucket{method="POST",outcome="SUCCESS",status="200",uri="/realms/{realm}/protocol/{protocol}/token",le="0.001"} 0
http_server_requests_seconds_bucket{method="POST",outcome="SUCCESS",status="200",uri="/realms/{realm}/protocol/{protocol}/token",le="0.01"} 10
http_server_requests_seconds_bucket{method="POST",outcome="SUCCESS",status="200",uri="/realms/{realm}/protocol/{protocol}/token",le="0.1"} 10
http_server_requests_seconds_bucket{method="POST",outcome="SUCCESS",status="200",uri="/realms/{realm}/protocol/{protocol}/token",le="+Inf"} 10
http_server_requests_seconds_count{method="POST",outcome="SUCCESS",status="200",uri="/realms/{realm}/protocol/{protocol}/token"} 10
http_server_requests_seconds_sum{method="POST",outcome="SUCCESS",status="200",uri="/realms/{realm}/protocol/{protocol}/token"} 0.05
http_server_requests_seconds_bucket{method="GET",outcome="SUCCESS",status="200",uri="/health/ready",le="+Inf"} 5
http_server_requests_seconds_count{method="GET",outcome="SUCCESS",status="200",uri="/health/ready"} 5
http_server_requests_seconds_sum{method="GET",outcome="SUCCESS",status="200",uri="/health/ready"} 0.01
`

// 100 more 200s (50 below 1 ms, 50 in 1-10 ms), and a new series: 4 401s in 10-100 ms.
const kcEnd = `# TYPE http_server_requests_seconds histogram
http_server_requests_seconds_bucket{method="POST",outcome="SUCCESS",status="200",uri="/realms/{realm}/protocol/{protocol}/token",le="0.001"} 50
http_server_requests_seconds_bucket{method="POST",outcome="SUCCESS",status="200",uri="/realms/{realm}/protocol/{protocol}/token",le="0.01"} 110
http_server_requests_seconds_bucket{method="POST",outcome="SUCCESS",status="200",uri="/realms/{realm}/protocol/{protocol}/token",le="0.1"} 110
http_server_requests_seconds_bucket{method="POST",outcome="SUCCESS",status="200",uri="/realms/{realm}/protocol/{protocol}/token",le="+Inf"} 110
http_server_requests_seconds_count{method="POST",outcome="SUCCESS",status="200",uri="/realms/{realm}/protocol/{protocol}/token"} 110
http_server_requests_seconds_sum{method="POST",outcome="SUCCESS",status="200",uri="/realms/{realm}/protocol/{protocol}/token"} 0.3
http_server_requests_seconds_bucket{method="POST",outcome="CLIENT_ERROR",status="401",uri="/realms/{realm}/protocol/{protocol}/token",le="0.001"} 0
http_server_requests_seconds_bucket{method="POST",outcome="CLIENT_ERROR",status="401",uri="/realms/{realm}/protocol/{protocol}/token",le="0.01"} 0
http_server_requests_seconds_bucket{method="POST",outcome="CLIENT_ERROR",status="401",uri="/realms/{realm}/protocol/{protocol}/token",le="0.1"} 4
http_server_requests_seconds_bucket{method="POST",outcome="CLIENT_ERROR",status="401",uri="/realms/{realm}/protocol/{protocol}/token",le="+Inf"} 4
http_server_requests_seconds_count{method="POST",outcome="CLIENT_ERROR",status="401",uri="/realms/{realm}/protocol/{protocol}/token"} 4
http_server_requests_seconds_sum{method="POST",outcome="CLIENT_ERROR",status="401",uri="/realms/{realm}/protocol/{protocol}/token"} 0.2
http_server_requests_seconds_bucket{method="GET",outcome="SUCCESS",status="200",uri="/health/ready",le="+Inf"} 9
http_server_requests_seconds_count{method="GET",outcome="SUCCESS",status="200",uri="/health/ready"} 9
http_server_requests_seconds_sum{method="GET",outcome="SUCCESS",status="200",uri="/health/ready"} 0.02
`

func TestDeltaHistogram(t *testing.T) {
	sel := Selector{Family: "http_server_requests_seconds", Status: "status",
		Match: map[string]string{"method": "POST", "uri": "/realms/{realm}/protocol/{protocol}/token"}}
	w, err := Delta(parse(t, kcStart), parse(t, kcEnd), sel)
	if err != nil {
		t.Fatal(err)
	}
	if w.Series != 2 || w.Requests != 104 || w.ByStatus["200"] != 100 || w.ByStatus["401"] != 4 || w.Errors != 4 {
		t.Fatalf("window %+v", w)
	}
	q := w.Latency
	if q == nil || q.Bounds != 3 || q.Capped {
		t.Fatalf("latency %+v", q)
	}
	// Rank 52 of 104: 50 below 1 ms, 50 in (1, 10]: 1 + 9*2/50 ms.
	// Rank 98.8: 1 + 9*48.8/50. Rank 102.96: 4 in (10, 100]: 10 + 90*2.96/4.
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"p50", q.P50, 1 + 9*2.0/50}, {"p95", q.P95, 1 + 9*48.8/50}, {"p99", q.P99, 10 + 90*2.96/4},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v ms, want %v", c.name, c.got, c.want)
		}
	}
}

func TestDeltaCounterAndSummary(t *testing.T) {
	start := parse(t, "# TYPE req_total counter\nreq_total{code=\"200\",path=\"/t\"} 5\nreq_total{code=\"500\",path=\"/t\"} 1\n")
	end := parse(t, "# TYPE req_total counter\nreq_total{code=\"200\",path=\"/t\"} 25\nreq_total{code=\"500\",path=\"/t\"} 3\nreq_total{code=\"200\",path=\"/u\"} 99\n")
	w, err := Delta(start, end, Selector{Family: "req_total", Match: map[string]string{"path": "/t"}, Status: "code"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Requests != 22 || w.Errors != 2 || w.Latency != nil {
		t.Errorf("window %+v", w)
	}
	sum := "# TYPE s summary\ns_count{uri=\"/t\",status=\"302\"} %s\ns_sum{uri=\"/t\",status=\"302\"} 1\n"
	w, err = Delta(parse(t, strings.Replace(sum, "%s", "3", 1)), parse(t, strings.Replace(sum, "%s", "10", 1)),
		Selector{Family: "s", Match: map[string]string{"uri": "/t"}, Status: "status"})
	if err != nil || w.Requests != 7 || w.Errors != 0 {
		t.Errorf("summary window %+v, %v (a 3xx is no error)", w, err)
	}
}

func TestDeltaErrors(t *testing.T) {
	sel := Selector{Family: "req_total", Match: map[string]string{"path": "/t"}, Status: "code"}
	ten := parse(t, "# TYPE req_total counter\nreq_total{code=\"200\",path=\"/t\"} 10\n")
	two := parse(t, "# TYPE req_total counter\nreq_total{code=\"200\",path=\"/t\"} 2\n")
	other := parse(t, "# TYPE other counter\nother 1\n")
	for name, tc := range map[string]struct {
		start, end Families
		sel        Selector
		want       string
	}{
		"restart":   {ten, two, sel, "went down"},
		"no family": {ten, other, sel, "no metric family req_total"},
		"no series": {ten, ten, Selector{Family: "req_total", Match: map[string]string{"path": "/x"}}, `no series of req_total matches req_total{path="/x"}`},
	} {
		if _, err := Delta(tc.start, tc.end, tc.sel); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
		}
	}
}

func TestQuantileInfBucket(t *testing.T) {
	b := map[float64]float64{0.1: 1, math.Inf(1): 10}
	q := quantiles(b)
	if !q.Capped || q.P99 != 100 || q.P50 != 100 {
		t.Errorf("%+v: a rank in +Inf is the highest finite bound, capped", q)
	}
}

// TestParseMalformed: the error names the file and the line.
func TestParseMalformed(t *testing.T) {
	_, err := Parse("s2-c8.metrics.end.prom", strings.NewReader("# TYPE a counter\na 1\na{b=\"c\" 2\n"))
	if err == nil || !strings.Contains(err.Error(), "s2-c8.metrics.end.prom") || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("error %v: want the file and line 3", err)
	}
}

func TestParseSelector(t *testing.T) {
	sel, err := ParseSelector(`http_server_requests_seconds{uri="/realms/{realm}/token",method="POST"}`, "status")
	if err != nil || sel.Family != "http_server_requests_seconds" || sel.Match["uri"] != "/realms/{realm}/token" ||
		sel.Match["method"] != "POST" || sel.Status != "status" {
		t.Errorf("%+v, %v", sel, err)
	}
	if got := sel.String(); got != `http_server_requests_seconds{method="POST",uri="/realms/{realm}/token"}` {
		t.Errorf("String() = %s", got)
	}
	for _, bad := range []string{"", "a{b=}", "a b"} {
		if _, err := ParseSelector(bad, "status"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestLookup(t *testing.T) {
	known := Known(func(p string) (Product, bool) {
		switch p {
		case "none":
			return Product{NA: "no metrics endpoint"}, true
		case "some":
			return Product{Scenarios: map[string]Selector{"introspect": {Family: "f", Match: map[string]string{"endpoint": "/i"}}}}, true
		}
		return Product{}, false
	})
	if _, why := known.Lookup("none", "discovery"); why != "no metrics endpoint" {
		t.Errorf("none: %q", why)
	}
	if _, why := known.Lookup("some", "auth_code"); !strings.Contains(why, "no server-side metric is known for some auth_code") {
		t.Errorf("some auth_code: %q", why)
	}
	if sel, why := known.Lookup("some", "introspect"); why != "" || sel.Match["endpoint"] != "/i" {
		t.Errorf("some introspect: %+v %q", sel, why)
	}
	for _, k := range []Known{known, nil} {
		if _, why := k.Lookup("other", "discovery"); why != "no server-side metric names are known for other" {
			t.Errorf("other: %q", why)
		}
	}
}

func TestAgrees(t *testing.T) {
	for _, c := range []struct {
		n, want, slack int64
		ok             bool
	}{{1000, 1000, 0, true}, {1010, 1000, 0, true}, {1011, 1000, 0, false}, {1011, 1000, 4, true}, {985, 1000, 4, false}} {
		if got := Agrees(c.n, c.want, c.slack); got != c.ok {
			t.Errorf("Agrees(%d, %d, %d) = %v", c.n, c.want, c.slack, got)
		}
	}
}
