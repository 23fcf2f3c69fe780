package load

import (
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

// TestLatencyBuf: values handed over through the buffer, several fills of
// it, make the same histogram as values recorded directly; out-of-range
// values are clamped, not lost.
func TestLatencyBuf(t *testing.T) {
	want, got := schema.NewHistogram(), schema.NewHistogram()
	var l latencyBuf
	var values []int64
	for v := int64(1); v <= int64(schema.HistHighestNS); v = v*9/8 + 1 {
		values = append(values, v, v+1, v*2-1)
	}
	values = append(values, 0, -5, int64(schema.HistHighestNS), 1<<62)
	fills := 0
	for _, v := range values {
		want.RecordValue(min(max(v, 1), int64(schema.HistHighestNS)))
		if l.record(v) {
			fills++
			l.drain(got)
		}
	}
	l.drain(got)
	if !got.Equals(want) || got.TotalCount() != int64(len(values)) || fills < 2 {
		t.Errorf("handed-over histogram differs: count %d/%d, max %d/%d, p50 %d/%d (%d fills)",
			got.TotalCount(), want.TotalCount(), got.Max(), want.Max(), got.ValueAtQuantile(50), want.ValueAtQuantile(50), fills)
	}
	if l.n != 0 {
		t.Errorf("drain left %d values", l.n)
	}
}
