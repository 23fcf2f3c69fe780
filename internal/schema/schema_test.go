package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// committedStepV1 decodes testdata/step-v1.json.
func committedStepV1(t *testing.T) *Step {
	t.Helper()
	f, err := os.Open("testdata/step-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := DecodeStep(f, "step-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testdata/step-v1.json is a committed idpbench.step/v1 record: readers must
// keep decoding it for as long as v1 is read.
func TestDecodeCommittedStepV1(t *testing.T) {
	s := committedStepV1(t)
	if s.Scenario != ScenarioDiscovery || s.Connections != 8 || s.Requests == 0 {
		t.Fatalf("decoded %s c=%d requests=%d", s.Scenario, s.Connections, s.Requests)
	}
	h, err := DecodeHistogram(s.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != s.OK+s.Errors.Non2xx+s.Errors.Check {
		t.Errorf("histogram holds %d values, the record %d responses", h.TotalCount(), s.OK+s.Errors.Non2xx+s.Errors.Check)
	}
	if got := Summarize(h); got != s.LatencyMS {
		t.Errorf("summary of the histogram %+v != latency_ms %+v", got, s.LatencyMS)
	}
}

func TestCheckVersion(t *testing.T) {
	tests := []struct {
		got, want string // want "" = accepted
	}{
		{StepV1, ""},
		{StepV1 + ".3", ""},
		{"idpbench.step/v2", `f.json: schema "idpbench.step/v2" is not supported (this build reads idpbench.step/v1)`},
		{"idpbench.meta/v1", `f.json: schema "idpbench.meta/v1" is not a idpbench.step record`},
		{"", `f.json: no "schema" field`},
		{"idpbench.step/v10", "is not supported"},
	}
	for _, tt := range tests {
		err := CheckVersion("f.json", StepV1, tt.got)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: unexpected error %v", tt.got, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: err = %v, want %q", tt.got, err, tt.want)
		}
	}
}

func TestDecodeStepErrorsNameTheFile(t *testing.T) {
	for _, in := range []string{"", "{", `{"schema":"idpbench.step/v2"}`} {
		_, err := DecodeStep(strings.NewReader(in), "results/x/hydra/discovery-c2.json")
		if err == nil || !strings.Contains(err.Error(), "results/x/hydra/discovery-c2.json") {
			t.Errorf("input %q: err = %v, want the file named", in, err)
		}
	}
}

func TestHistogramRoundTripAndSummary(t *testing.T) {
	h := NewHistogram()
	for i := int64(1); i <= 1000; i++ {
		h.RecordValue(i * 1e6) // 1..1000 ms
	}
	enc, err := EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "HIST") {
		t.Errorf("encoding starts %q, want HIST", enc[:8])
	}
	back, err := DecodeHistogram(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equals(h) {
		t.Error("decoded histogram differs from the original")
	}
	l := Summarize(back)
	if l.P50 < 499 || l.P50 > 501 || l.P99 < 989 || l.P99 > 991 || l.Max < 999 {
		t.Errorf("summary %+v, want p50≈500 p99≈990 max≈1000 ms", l)
	}
}

func TestDecodeHistogramRejectsOtherGeometry(t *testing.T) {
	small, _ := EncodeHistogram(newSmall())
	if _, err := DecodeHistogram(small); err == nil || !strings.Contains(err.Error(), "geometry") {
		t.Errorf("err = %v, want a geometry error", err)
	}
}

func newSmall() *hdr.Histogram { return hdr.New(1, 1e6, 2) }

// TestValidateStep: a step that never measured (status error) needs no
// window; anything else needs one, and its counts must add up.
func TestValidateStep(t *testing.T) {
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ok := Step{Scenario: ScenarioDiscovery, Status: StatusComplete, Connections: 1, Start: start, End: start.Add(time.Second),
		Requests: 3, OK: 2, Errors: Errors{Timeout: 1}}
	if err := ok.Validate(); err != nil {
		t.Errorf("a complete step: %v", err)
	}
	failed := Step{Scenario: ScenarioDiscovery, Status: StatusError, Connections: 1, Error: "connection refused"}
	if err := failed.Validate(); err != nil {
		t.Errorf("an error step without a window: %v", err)
	}
	backwards := ok
	backwards.End = start.Add(-time.Second)
	if err := backwards.Validate(); err == nil || !strings.Contains(err.Error(), "no measured window") {
		t.Errorf("end before start: %v", err)
	}
}

// TestWarmupFields: the adaptive warmup's fields are absent from a record
// of a fixed warmup (the committed v1 record decodes without them and
// encodes without them), and an adaptive step's round-trip unchanged.
func TestWarmupFields(t *testing.T) {
	fixed := committedStepV1(t)
	if fixed.WarmupRule != nil || fixed.WarmupStable != nil || fixed.WarmupQPS != nil {
		t.Errorf("a fixed-warmup record decodes with warmup_rule %v, warmup_stable %v, warmup_qps %v",
			fixed.WarmupRule, fixed.WarmupStable, fixed.WarmupQPS)
	}
	b, err := json.Marshal(fixed)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"warmup_rule", "warmup_stable", "warmup_qps"} {
		if bytes.Contains(b, []byte(name)) {
			t.Errorf("a fixed-warmup record encodes %s", name)
		}
	}
	adaptive := *fixed
	adaptive.WarmupS = 7
	adaptive.WarmupRule = &WarmupRule{MinS: 5, MaxS: 60, StableIntervals: 3, TolerancePct: 5}
	adaptive.WarmupStable = new(false)
	adaptive.WarmupQPS = []float64{12.5, 80, 99.5}
	if b, err = json.Marshal(&adaptive); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"warmup_rule":{"min_s":5,"max_s":60,"stable_intervals":3,"tolerance_pct":5}`,
		`"warmup_stable":false`, `"warmup_qps":[12.5,80,99.5]`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the adaptive record lacks %s", want)
		}
	}
	back, err := DecodeStep(bytes.NewReader(b), "adaptive.json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.WarmupRule, adaptive.WarmupRule) || back.WarmupStable == nil || *back.WarmupStable ||
		!reflect.DeepEqual(back.WarmupQPS, adaptive.WarmupQPS) || back.WarmupS != 7 {
		t.Errorf("round trip: rule %+v stable %v qps %v warmup_s %v", back.WarmupRule, back.WarmupStable, back.WarmupQPS, back.WarmupS)
	}
}

// TestServerMetricsField: older records have no server_metrics (nil), and
// a record with it decodes to the same scrapes it was written with.
func TestServerMetricsField(t *testing.T) {
	if s := committedStepV1(t); s.ServerMetrics != nil {
		t.Fatalf("the committed record has no server_metrics, decoded %+v", s.ServerMetrics)
	}
	s := committedStepV1(t)
	at := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	s.ServerMetrics = &ServerMetrics{URL: "http://127.0.0.1:9000/metrics", EveryS: 5, Scrapes: []ServerScrape{
		{At: at, Edge: EdgeStart, DurationMS: 3.5, File: "s1-c8.metrics.start.prom", Bytes: 1234},
		{At: at.Add(10 * time.Second), Edge: EdgeEnd, DurationMS: 2000, Error: "scraping http://127.0.0.1:9000/metrics: context deadline exceeded"}},
		Selector: &ServerSelector{Family: "http_server_requests_seconds", Match: map[string]string{"uri": "/x"}, StatusLabel: "status"}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeStep(bytes.NewReader(b), "round-trip.json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.ServerMetrics, s.ServerMetrics) {
		t.Errorf("decoded %+v, wrote %+v", got.ServerMetrics, s.ServerMetrics)
	}
}

// testdata/step-v1-segment.json is a committed record of one agent of a
// segmented step with a common start (loadstep --segment 1/3 --start-at):
// readers must keep decoding its segment and start fields.
func TestDecodeCommittedSegmentStep(t *testing.T) {
	f, err := os.Open("testdata/step-v1-segment.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := DecodeStep(f, "step-v1-segment.json")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 10, 0, 35, 250_000_000, time.UTC)
	want := Segment{Index: 1, Of: 3, TotalConnections: 24}
	if s.Segment == nil || *s.Segment != want || s.Connections != 8 || s.StartAt == nil || !s.StartAt.Equal(at) ||
		s.StartedAt == nil || s.StartedAt.Sub(at) != 412907*time.Nanosecond || s.StartLateMS == nil || *s.StartLateMS != 0.412907 ||
		!s.Start.Equal(at.Add(time.Duration(s.WarmupS*float64(time.Second)))) {
		t.Errorf("segment %+v c=%d start_at %v started_at %v start_late_ms %v start %s: want %+v, 8, %s, +412907ns, 0.412907, start_at + warmup_s",
			s.Segment, s.Connections, s.StartAt, s.StartedAt, s.StartLateMS, s.Start, want, at)
	}
}
