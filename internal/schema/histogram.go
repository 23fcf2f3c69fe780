package schema

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry shared by every record: 1 ns to 60 s, 3 significant digits.
const (
	HistLowestNS  = 1
	HistHighestNS = 60e9
	HistSigFigs   = 3
)

// NewHistogram returns an empty histogram with the shared geometry.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistLowestNS, HistHighestNS, HistSigFigs)
}

// EncodeHistogram returns h as V2-compressed base64 ("HIST...").
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encoding histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram decodes a histogram field and checks its geometry.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decoding histogram: %w", err)
	}
	if !SameGeometry(h, NewHistogram()) {
		return nil, fmt.Errorf("histogram geometry (%d, %d, %d) is not idpbench's (%d, %d, %d)",
			h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(),
			HistLowestNS, int64(HistHighestNS), HistSigFigs)
	}
	return h, nil
}

// SameGeometry reports whether two histograms can be merged exactly.
func SameGeometry(a, b *hdrhistogram.Histogram) bool {
	return a.LowestTrackableValue() == b.LowestTrackableValue() &&
		a.HighestTrackableValue() == b.HighestTrackableValue() &&
		a.SignificantFigures() == b.SignificantFigures()
}

// Summarize returns the Latency summary of a histogram of ns values.
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	return Latency{
		Min:  ms(h.Min()),
		Mean: h.Mean() / 1e6,
		P50:  ms(h.ValueAtQuantile(50)),
		P75:  ms(h.ValueAtQuantile(75)),
		P90:  ms(h.ValueAtQuantile(90)),
		P95:  ms(h.ValueAtQuantile(95)),
		P99:  ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)),
		Max:  ms(h.Max()),
	}
}
