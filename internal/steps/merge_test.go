package steps

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/idpbench/idpbench/internal/schema"
)

var mergeStart = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// recorder builds a step from latencies recorded per interval.
type recorder struct {
	overall   *hdrhistogram.Histogram
	intervals []*hdrhistogram.Histogram
}

func newRecorder(n int) *recorder {
	r := &recorder{overall: schema.NewHistogram()}
	for range n {
		r.intervals = append(r.intervals, schema.NewHistogram())
	}
	return r
}

func (r *recorder) record(t *testing.T, interval int, ns int64) {
	t.Helper()
	if err := r.overall.RecordValue(ns); err != nil {
		t.Fatal(err)
	}
	if err := r.intervals[interval].RecordValue(ns); err != nil {
		t.Fatal(err)
	}
}

// step returns an agent's step record over the recorded values.
func (r *recorder) step(t *testing.T, start time.Time, errs int64) *schema.Step {
	t.Helper()
	n := r.overall.TotalCount()
	enc, err := schema.EncodeHistogram(r.overall)
	if err != nil {
		t.Fatal(err)
	}
	s := &schema.Step{
		Schema: schema.StepV1, Product: "hydra", ProductVersion: "v2.3.0", Scenario: "discovery", Check: schema.CheckIssuer,
		TargetURL: "http://127.0.0.1:4444/.well-known/openid-configuration", Connections: 4, DurationS: 3, IntervalS: 1,
		Start: start, End: start.Add(3 * time.Second), Status: schema.StatusComplete, LatencyModel: schema.ModelClosedLoop,
		Requests: n, OK: n - errs, Errors: schema.Errors{Non2xx: errs}, StatusCodes: map[string]int64{"200": n - errs, "500": errs},
		QPS: float64(n) / 3, Histogram: enc, LatencyMS: schema.Summarize(r.overall),
		Driver: schema.Driver{CPUS: 1.5, CPUPct: 50, GOMAXPROCS: 2}, Labels: map[string]string{"phase": "ladder"},
	}
	for i, h := range r.intervals {
		s.Intervals = append(s.Intervals, interval(t, h, float64(i), 1, 0))
	}
	return s
}

// agentsAndWhole records the same random values into agent A or B and into C.
func agentsAndWhole(t *testing.T) (a, b, c *recorder) {
	a, b, c = newRecorder(3), newRecorder(3), newRecorder(3)
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 30000 {
		iv := i % 3
		ns := int64(rng.ExpFloat64()*2e6) + 50_000
		if i%7 == 0 {
			ns *= 40 // a slow tail
		}
		if rng.IntN(2) == 0 {
			a.record(t, iv, ns)
		} else {
			b.record(t, iv, ns)
		}
		c.record(t, iv, ns)
	}
	return a, b, c
}

func TestMergeEqualsOneHistogramOfBothStreams(t *testing.T) {
	ra, rb, rc := agentsAndWhole(t)
	a, b := ra.step(t, mergeStart, 3), rb.step(t, mergeStart.Add(200*time.Millisecond), 4)
	b.Driver.Limited = true
	got, err := Merge([]File{{"a.json", a}, {"b.json", b}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := schema.DecodeHistogram(got.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Equals(rc.overall) {
		t.Fatal("merged histogram differs from the histogram that recorded both streams")
	}
	for _, q := range []float64{50, 90, 99, 99.9, 100} {
		if h.ValueAtQuantile(q) != rc.overall.ValueAtQuantile(q) {
			t.Errorf("p%v: merged %d, whole %d", q, h.ValueAtQuantile(q), rc.overall.ValueAtQuantile(q))
		}
	}
	if got.LatencyMS != schema.Summarize(rc.overall) {
		t.Errorf("latency_ms %+v, want %+v", got.LatencyMS, schema.Summarize(rc.overall))
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"requests", got.Requests, rc.overall.TotalCount()},
		{"ok", got.OK, a.OK + b.OK},
		{"non2xx", got.Errors.Non2xx, int64(7)},
		{"status 500", got.StatusCodes["500"], int64(7)},
		{"error_rate", got.ErrorRate, 7 / float64(rc.overall.TotalCount())},
		{"qps", got.QPS, a.QPS + b.QPS},
		{"connections", got.Connections, 8},
		{"agents", got.Agents, 2},
		{"check", got.Check, schema.CheckIssuer},
		{"cpu_s", got.Driver.CPUS, 3.0},
		{"limited", got.Driver.Limited, true},
		{"status", got.Status, schema.StatusComplete},
		{"start", got.Start, mergeStart},
		{"end", got.End, b.End},
		{"labels", got.Labels["phase"], "ladder"},
		{"intervals", len(got.Intervals), 3},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	for i, iv := range got.Intervals {
		ih, err := schema.DecodeHistogram(iv.Histogram)
		if err != nil {
			t.Fatal(err)
		}
		if !ih.Equals(rc.intervals[i]) || iv.Requests != rc.intervals[i].TotalCount() ||
			iv.P99MS != schema.Summarize(rc.intervals[i]).P99 {
			t.Errorf("interval %d differs from the whole stream's", i)
		}
	}
}

func TestMergeIsAssociative(t *testing.T) {
	ra, rb, _ := agentsAndWhole(t)
	a, b := ra.step(t, mergeStart, 0), rb.step(t, mergeStart, 0)
	ab, err := Merge([]File{{"a.json", a}, {"b.json", b}})
	if err != nil {
		t.Fatal(err)
	}
	abb, err1 := Merge([]File{{"ab.json", ab}, {"b.json", b}})
	all, err2 := Merge([]File{{"a.json", a}, {"b.json", b}, {"b.json", b}})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if abb.Histogram != all.Histogram || abb.Requests != all.Requests || abb.Agents != 3 || all.Agents != 3 {
		t.Errorf("merge(merge(a,b),b) differs from merge(a,b,b): agents %d/%d", abb.Agents, all.Agents)
	}
}

func TestMergeErrors(t *testing.T) {
	ra, rb, _ := agentsAndWhole(t)
	other := hdrhistogram.New(1, 1e9, 2)
	if err := other.RecordValue(1000); err != nil {
		t.Fatal(err)
	}
	otherEnc, err := other.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(b *schema.Step)
		want   string
	}{
		{"geometry", func(b *schema.Step) { b.Histogram = string(otherEnc) }, "geometry"},
		{"interval geometry", func(b *schema.Step) { b.Intervals[1].Histogram = string(otherEnc) }, "intervals[1].histogram"},
		{"window starts late", func(b *schema.Step) { b.Start = b.Start.Add(5 * time.Second); b.End = b.End.Add(5 * time.Second) },
			"does not match"},
		{"window ends early", func(b *schema.Step) { b.End = b.End.Add(-1500 * time.Millisecond) },
			"does not match agent-a.json's"},
		// The remedy names loadstep flags that exist (loadstep --help).
		{"window remedy", func(b *schema.Step) { b.Start = b.Start.Add(-2 * time.Second) },
			"start them at the same moment with the same loadstep --warmup and --duration"},
		{"product", func(b *schema.Step) { b.Product = "keycloak" }, "product"},
		{"scenario", func(b *schema.Step) { b.Scenario = "userinfo" }, "scenario"},
		{"check", func(b *schema.Step) { b.Check = schema.Check2xx }, `check "2xx" differs`},
		{"target", func(b *schema.Step) { b.TargetURL = "http://127.0.0.1:1/" }, "target_url"},
		{"rate mode mixed", func(b *schema.Step) { b.CorrectedHistogram = b.Histogram }, "corrected_histogram"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := ra.step(t, mergeStart, 0), rb.step(t, mergeStart, 0)
			tc.change(b)
			_, err := Merge([]File{{"agent-a.json", a}, {"agent-b.json", b}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one about %q", err, tc.want)
			}
			if tc.name != "rate mode mixed" && !strings.Contains(err.Error(), "agent-b.json") {
				t.Errorf("error %q does not name agent-b.json", err)
			}
		})
	}
	if _, err := Merge(nil); err == nil {
		t.Error("Merge(nil) succeeded")
	}
}

func TestMergeStatus(t *testing.T) {
	ra, rb, _ := agentsAndWhole(t)
	tests := []struct{ a, b, want string }{
		{schema.StatusComplete, schema.StatusComplete, schema.StatusComplete},
		{schema.StatusComplete, schema.StatusInterrupted, schema.StatusInterrupted},
		{schema.StatusInterrupted, schema.StatusError, schema.StatusError},
	}
	for _, tc := range tests {
		a, b := ra.step(t, mergeStart, 0), rb.step(t, mergeStart, 0)
		a.Status, b.Status = tc.a, tc.b
		got, err := Merge([]File{{"a.json", a}, {"b.json", b}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != tc.want {
			t.Errorf("merge(%s, %s) status %s, want %s", tc.a, tc.b, got.Status, tc.want)
		}
	}
}

// asIteration turns an agent's step into a rate-mode iteration step: its
// histograms double as corrected histograms, and name x holds the step's
// own histogram, name y the values of ry.
func asIteration(t *testing.T, s *schema.Step, ry *recorder, late int64, lateMax float64) *schema.Step {
	t.Helper()
	y := ry.step(t, s.Start, 0)
	s.CountUnit, s.RequestOrder, s.HTTPRequests = schema.CountIterations, []string{"x", "y"}, s.Requests+y.Requests
	s.RequestsByName = map[string]schema.NamedRequests{
		"x": {Requests: s.Requests, OK: s.OK, Errors: s.Errors, StatusCodes: s.StatusCodes, LatencyMS: s.LatencyMS, Histogram: s.Histogram},
		"y": {Requests: y.Requests, OK: y.Requests, StatusCodes: map[string]int64{"302": y.Requests}, LatencyMS: y.LatencyMS, Histogram: y.Histogram},
	}
	s.CorrectedHistogram, s.Late, s.LateMaxMS = s.Histogram, &late, &lateMax
	for i := range s.Intervals {
		s.Intervals[i].CorrectedHistogram, s.Intervals[i].Late = s.Intervals[i].Histogram, late+int64(i)
	}
	return s
}

func TestMergeIterationAndRateFields(t *testing.T) {
	ra, rb, rc := agentsAndWhole(t)
	ya, yb, yc := agentsAndWhole(t)
	a := asIteration(t, ra.step(t, mergeStart, 3), ya, 5, 12.5)
	b := asIteration(t, rb.step(t, mergeStart, 4), yb, 7, 30)
	got, err := Merge([]File{{"a.json", a}, {"b.json", b}})
	if err != nil {
		t.Fatal(err)
	}
	if got.CountUnit != schema.CountIterations || strings.Join(got.RequestOrder, ",") != "x,y" ||
		got.HTTPRequests != a.HTTPRequests+b.HTTPRequests || *got.Late != 12 || *got.LateMaxMS != 30 {
		t.Errorf("count_unit %q order %v http_requests %d late %d late_max_ms %v", got.CountUnit, got.RequestOrder,
			got.HTTPRequests, *got.Late, *got.LateMaxMS)
	}
	for name, whole := range map[string]*recorder{"x": rc, "y": yc} {
		nr := got.RequestsByName[name]
		h, err := schema.DecodeHistogram(nr.Histogram)
		if err != nil {
			t.Fatal(err)
		}
		want := a.RequestsByName[name].Requests + b.RequestsByName[name].Requests
		if !h.Equals(whole.overall) || nr.Requests != want || nr.LatencyMS != schema.Summarize(whole.overall) {
			t.Errorf("%s: merged histogram differs from the whole stream's, or requests %d != %d", name, nr.Requests, want)
		}
	}
	if x := got.RequestsByName["x"]; x.Errors.Non2xx != 7 || x.StatusCodes["500"] != 7 || got.RequestsByName["y"].StatusCodes["302"] != yc.overall.TotalCount() {
		t.Errorf("named errors/status codes not summed: x %+v %v, y %v", x.Errors, x.StatusCodes, got.RequestsByName["y"].StatusCodes)
	}
	for i, iv := range got.Intervals {
		ch, err := schema.DecodeHistogram(iv.CorrectedHistogram)
		if err != nil {
			t.Fatal(err)
		}
		if !ch.Equals(rc.intervals[i]) || iv.Late != 12+2*int64(i) || iv.CorrectedP99MS != schema.Summarize(rc.intervals[i]).P99 {
			t.Errorf("interval %d: corrected histogram or late (%d) not merged", i, iv.Late)
		}
	}
	for _, change := range []func(*schema.Step){
		func(s *schema.Step) { s.CountUnit = "" },
		func(s *schema.Step) { s.RequestOrder = []string{"y", "x"} },
	} {
		c := asIteration(t, rb.step(t, mergeStart, 0), yb, 0, 0)
		change(c)
		if _, err := Merge([]File{{"a.json", a}, {"c.json", c}}); err == nil || !strings.Contains(err.Error(), "c.json") {
			t.Errorf("merging a different iteration: error %v", err)
		}
	}
}

// TestMergeWarmup: the merge keeps the longest warmup, the adaptive rule and
// verdict only where the agents agree, and no agent's warmup curve.
func TestMergeWarmup(t *testing.T) {
	ra, rb, _ := agentsAndWhole(t)
	rule := schema.WarmupRule{MinS: 5, MaxS: 60, StableIntervals: 3, TolerancePct: 5}
	other := rule
	other.TolerancePct = 10
	tests := []struct {
		name       string
		ruleB      *schema.WarmupRule
		stableB    *bool
		wantRule   bool
		wantStable *bool
	}{
		{"agree", &rule, new(true), true, new(true)},
		{"verdicts differ", &rule, new(false), true, nil},
		{"rules differ", &other, new(true), false, new(true)},
		{"one fixed", nil, nil, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := ra.step(t, mergeStart, 0), rb.step(t, mergeStart, 0)
			a.WarmupS, a.WarmupRule, a.WarmupStable, a.WarmupQPS = 7, &rule, new(true), []float64{10, 100, 101, 99}
			b.WarmupS, b.WarmupRule, b.WarmupStable, b.WarmupQPS = 8, tt.ruleB, tt.stableB, []float64{20, 99, 100, 100, 101}
			got, err := Merge([]File{{"a.json", a}, {"b.json", b}})
			if err != nil {
				t.Fatal(err)
			}
			if got.WarmupS != 8 || (got.WarmupRule != nil) != tt.wantRule || got.WarmupQPS != nil ||
				(got.WarmupStable == nil) != (tt.wantStable == nil) || (got.WarmupStable != nil && *got.WarmupStable != *tt.wantStable) {
				t.Errorf("warmup_s %v, rule %+v, stable %v, qps %v", got.WarmupS, got.WarmupRule, got.WarmupStable, got.WarmupQPS)
			}
			if got.WarmupRule != nil && (*got.WarmupRule != rule || got.WarmupRule == a.WarmupRule) {
				t.Errorf("rule %+v: want a copy of %+v", got.WarmupRule, rule)
			}
		})
	}
}

// interval is one per-interval record of h over [ts, ts+length).
func interval(t testing.TB, h *hdrhistogram.Histogram, ts, length float64, errs int64) schema.Interval {
	enc, err := schema.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	lat := schema.Summarize(h)
	return schema.Interval{TS: ts, LengthS: length, Requests: h.TotalCount(), Errors: errs,
		QPS: float64(h.TotalCount()) / length, P50MS: lat.P50, P99MS: lat.P99, MaxMS: lat.Max, Histogram: enc}
}
