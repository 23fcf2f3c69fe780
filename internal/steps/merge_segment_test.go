package steps

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// segmentAgents records random values into three agents' recorders and
// into the whole, and returns the three agents' steps as segments 0..2 of
// 3 of a c=24 step (8 each), each started a little apart.
func segmentAgents(t *testing.T) ([]File, *recorder) {
	t.Helper()
	rs := []*recorder{newRecorder(3), newRecorder(3), newRecorder(3)}
	whole := newRecorder(3)
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range 9000 {
		ns := int64(rng.ExpFloat64()*1e6) + 20_000
		rs[rng.IntN(3)].record(t, i%3, ns)
		whole.record(t, i%3, ns)
	}
	at := mergeStart.Add(-2 * time.Second)
	var out []File
	for i, r := range rs {
		s := r.step(t, mergeStart, 0)
		s.Connections = 8
		s.Segment = &schema.Segment{Index: i, Of: 3, TotalConnections: 24}
		started := at.Add(time.Duration([]int{0, 3000, 1500}[i]) * time.Microsecond)
		late := float64(started.Sub(at)) / 1e6
		s.StartAt, s.StartedAt, s.StartLateMS = &at, &started, &late
		out = append(out, File{Path: []string{"agent-0.json", "agent-1.json", "agent-2.json"}[i], Step: s})
	}
	return out, whole
}

// TestMergeSegments: three c=8 segments merge to one c=24 step of three
// agents whose counts are the sums, whose histogram is the whole stream's,
// and which records the largest start skew and the common start.
func TestMergeSegments(t *testing.T) {
	steps, whole := segmentAgents(t)
	// Any order: the merge is of a set.
	got, err := Merge([]File{steps[2], steps[0], steps[1]})
	if err != nil {
		t.Fatal(err)
	}
	h, err := schema.DecodeHistogram(got.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, sf := range steps {
		sum += sf.Step.Requests
	}
	if got.Connections != 24 || got.Agents != 3 || got.Requests != sum || h.TotalCount() != sum || !h.Equals(whole.overall) {
		t.Errorf("c=%d agents %d requests %d (histogram %d): want c=24, 3 agents, the sum %d and the whole stream's histogram",
			got.Connections, got.Agents, got.Requests, h.TotalCount(), sum)
	}
	if got.Segment != nil || got.StartSkewMS == nil || *got.StartSkewMS != 3 || got.StartAt == nil || !got.StartAt.Equal(*steps[0].Step.StartAt) {
		t.Errorf("segment %+v, start_skew_ms %v, start_at %v: want none, 3 ms (max - min started_at), the common start", got.Segment, got.StartSkewMS, got.StartAt)
	}
	if got.StartedAt != nil || got.StartLateMS != nil {
		t.Errorf("started_at %v start_late_ms %v: one agent's, want none in the merge", got.StartedAt, got.StartLateMS)
	}
}

// TestMergeSegmentsRate: rate-mode segments merge to the whole rate,
// exactly, even where the shares' sum is not.
func TestMergeSegmentsRate(t *testing.T) {
	steps, _ := segmentAgents(t)
	for _, sf := range steps {
		s := sf.Step
		s.RateRPS, s.Segment.TotalRateRPS = 0.1/3, 0.1 // 3 x (0.1/3) != 0.1 in float64
		s.LatencyModel, s.CorrectedHistogram = schema.ModelOpenLoop, s.Histogram
	}
	got, err := Merge(steps)
	if err != nil {
		t.Fatal(err)
	}
	if got.RateRPS != 0.1 || got.Connections != 24 {
		t.Errorf("rate_rps %v c=%d, want the whole 0.1 and 24", got.RateRPS, got.Connections)
	}
}

// TestMergeSegmentRefusals: what is not one whole is refused, naming the
// files and what is wrong.
func TestMergeSegmentRefusals(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(steps []File) []File
		wants []string
	}{
		{"gap", func(s []File) []File { return []File{s[0], s[2]} },
			[]string{"segment 1 of 3 missing", "0/3 agent-0.json", "2/3 agent-2.json"}},
		{"two missing", func(s []File) []File { return s[:1] }, []string{"segment 1, 2 of 3 missing"}},
		{"overlap", func(s []File) []File {
			dup := *s[1].Step
			return []File{s[0], s[1], {Path: "agent-1-again.json", Step: &dup}, s[2]}
		}, []string{"segment 1/3 twice, in agent-1.json and agent-1-again.json"}},
		{"mixed N", func(s []File) []File { s[2].Step.Segment.Of = 4; return s },
			[]string{"merging agent-2.json: segment 2/4, but agent-0.json is 0/3"}},
		{"mixed success rule", func(s []File) []File { s[1].Step.Check = schema.Check2xx; return s },
			[]string{"merging agent-1.json: check \"2xx\" differs", "agent-0.json"}},
		{"mixed scenario", func(s []File) []File { s[2].Step.Scenario = schema.ScenarioUserinfo; return s },
			[]string{"merging agent-2.json: scenario \"userinfo\" differs", "agent-0.json"}},
		{"one without a segment", func(s []File) []File { s[1].Step.Segment = nil; return s },
			[]string{"merging agent-1.json: it has no segment, but agent-0.json is segment 0/3"}},
		{"another whole", func(s []File) []File { s[2].Step.Segment.TotalConnections = 30; return s },
			[]string{"merging agent-2.json: a segment of c=30", "agent-0.json is of c=24"}},
		{"shares do not add up", func(s []File) []File { s[0].Step.Connections = 7; return s },
			[]string{"connections 23", "whole step's 24", "0/3 agent-0.json"}},
		{"index out of range", func(s []File) []File { s[2].Step.Segment.Index = 3; return s },
			[]string{"agent-2.json: segment 3/3 is not an index 0..2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, _ := segmentAgents(t)
			_, err := Merge(tt.edit(steps))
			if err == nil {
				t.Fatal("merged; want a refusal")
			}
			for _, want := range tt.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q, want it to say %q", err, want)
				}
			}
		})
	}
}

// TestMergeWithoutSegmentsSkew: records without segments merge as before,
// with the skew of their window starts (no started_at in older records).
func TestMergeWithoutSegmentsSkew(t *testing.T) {
	ra, rb, _ := agentsAndWhole(t)
	a, b := ra.step(t, mergeStart, 0), rb.step(t, mergeStart.Add(40*time.Millisecond), 0)
	got, err := Merge([]File{{"a.json", a}, {"b.json", b}})
	if err != nil {
		t.Fatal(err)
	}
	if got.StartSkewMS == nil || *got.StartSkewMS != 40 || got.StartAt != nil || got.Connections != 8 || got.Agents != 2 {
		t.Errorf("start_skew_ms %v start_at %v c=%d agents %d: want 40, none, 8, 2", got.StartSkewMS, got.StartAt, got.Connections, got.Agents)
	}
}
