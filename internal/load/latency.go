package load

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/idpbench/idpbench/internal/schema"
)

// latencyBufLen is how many latencies a worker holds before handing them
// over: 1 KB per buffer, so ten thousand connections in rate mode (two
// buffers each) hold 20 MB, and the hand-over lock is taken once per 128
// requests.
const latencyBufLen = 128

// latencyBuf is a worker's latencies (ns) not yet in its interval's
// histogram. Handing them over records each value into the shared
// hdrhistogram.Histogram under the tallies lock (~15 ns a value), which
// costs the worker neither a histogram of its own — 220 KB in the step
// geometry, or a few tens of KB even as lazily touched bucket counts, too
// much at thousands of connections — nor a Histogram.Merge, which walks
// every bucket up to the largest value.
type latencyBuf struct {
	v [latencyBufLen]int64
	n int
}

// record adds one latency in ns and reports whether the buffer is full.
// Values beyond the geometry are clamped rather than lost.
func (l *latencyBuf) record(ns int64) (full bool) {
	l.v[l.n] = min(max(ns, schema.HistLowestNS), int64(schema.HistHighestNS))
	l.n++
	return l.n == latencyBufLen
}

// drain records every value into h and empties l.
func (l *latencyBuf) drain(h *hdrhistogram.Histogram) {
	for _, v := range l.v[:l.n] {
		h.RecordValue(v) // in range: clamped by record
	}
	l.n = 0
}
