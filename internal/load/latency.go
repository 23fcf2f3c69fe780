package load

import (
	"math/bits"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/idpbench/idpbench/internal/schema"
)

// latencyCounts is a worker's latency record for one interval: a plain
// counts array in HdrHistogram's own bucket layout for the step geometry
// (schema.NewHistogram: lowest 1 ns, 3 significant digits, so 2048
// sub-buckets, the upper 1024 of them per power of two), plus the range of
// indexes touched. Handing it over records each non-empty bucket once
// into an hdrhistogram.Histogram, where Histogram.Merge would walk every
// bucket up to the largest value with the library's iterator, a cost that
// shows at a hundred connections and one-second intervals.
type latencyCounts struct {
	counts []uint32 // one interval of one worker stays far below 2^32
	lo, hi int      // touched indexes; lo > hi when empty
}

const (
	subBucketHalfMag = 10 // log2(sub-bucket count / 2) for 3 significant digits
	subBucketMask    = 1<<(subBucketHalfMag+1) - 1
)

func newLatencyCounts() latencyCounts {
	n := latencyIndex(int64(schema.HistHighestNS)) + 1
	return latencyCounts{counts: make([]uint32, n), lo: n, hi: -1}
}

// latencyIndex is HdrHistogram's counts index of v (1 <= v <= HistHighestNS).
func latencyIndex(v int64) int {
	bucket := 64 - bits.LeadingZeros64(uint64(v)|subBucketMask) - (subBucketHalfMag + 1)
	sub := int(v >> uint(bucket))
	return (bucket+1)<<subBucketHalfMag + sub - 1<<subBucketHalfMag
}

// latencyValue is the lowest value of bucket index i.
func latencyValue(i int) int64 {
	if i < 2<<subBucketHalfMag {
		return int64(i)
	}
	bucket := i>>subBucketHalfMag - 1
	sub := i&(1<<subBucketHalfMag-1) + 1<<subBucketHalfMag
	return int64(sub) << uint(bucket)
}

// record adds one latency in ns; values beyond the geometry are clamped
// rather than lost.
func (l *latencyCounts) record(ns int64) {
	i := latencyIndex(min(max(ns, 1), int64(schema.HistHighestNS)))
	l.counts[i]++
	l.lo, l.hi = min(l.lo, i), max(l.hi, i)
}

// drain records every count into h and empties l.
func (l *latencyCounts) drain(h *hdrhistogram.Histogram) {
	for i := l.lo; i <= l.hi; i++ {
		if c := l.counts[i]; c != 0 {
			h.RecordValues(latencyValue(i), int64(c))
			l.counts[i] = 0
		}
	}
	l.lo, l.hi = len(l.counts), -1
}
