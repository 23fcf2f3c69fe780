package load

import (
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

// TestLatencyCountsMatchHdr: the worker's counts land every value in the
// bucket HdrHistogram itself uses, so the handed-over histogram equals one
// recorded directly.
func TestLatencyCountsMatchHdr(t *testing.T) {
	want, got := schema.NewHistogram(), schema.NewHistogram()
	l := newLatencyCounts()
	var values []int64
	for v := int64(1); v <= int64(schema.HistHighestNS); v = v*9/8 + 1 {
		values = append(values, v, v+1, v*2-1)
	}
	values = append(values, 0, -5, int64(schema.HistHighestNS), 1<<62) // clamped
	for _, v := range values {
		want.RecordValue(min(max(v, 1), int64(schema.HistHighestNS)))
		l.record(v)
	}
	l.drain(got)
	if !got.Equals(want) || got.TotalCount() != int64(len(values)) {
		t.Errorf("drained histogram differs: count %d/%d, max %d/%d, p50 %d/%d",
			got.TotalCount(), want.TotalCount(), got.Max(), want.Max(), got.ValueAtQuantile(50), want.ValueAtQuantile(50))
	}
	for i := 1; i+1 < len(l.counts); i++ {
		v, next := latencyValue(i), latencyValue(i+1)
		if latencyIndex(v) != i || !want.ValuesAreEquivalent(v, next-1) || want.ValuesAreEquivalent(v, next) {
			t.Fatalf("index %d: lowest value %d (index %d), next bucket from %d: not HdrHistogram's bucket", i, v, latencyIndex(v), next)
		}
	}
	for i, c := range l.counts {
		if c != 0 || l.lo <= l.hi {
			t.Fatalf("drain left counts behind (index %d: %d; lo %d hi %d)", i, c, l.lo, l.hi)
		}
	}
}
