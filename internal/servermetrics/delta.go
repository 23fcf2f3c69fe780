package servermetrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/idpbench/idpbench/internal/schema"
)

// Window is what the server counted for one endpoint between two scrapes.
type Window struct {
	Series   int              // series that matched the selector in the end scrape
	Requests int64            // requests counted (count delta, summed over the series)
	ByStatus map[string]int64 // requests by HTTP status (the selector's status label)
	Errors   int64            // requests whose status is not 2xx or 3xx
	// Latency is nil when the family has no buckets (a summary or a
	// counter) or nothing was counted: P50, P95 and P99 in milliseconds,
	// interpolated linearly inside a bucket (as PromQL's
	// histogram_quantile), so their resolution is the bucket bounds'.
	Latency *Quantiles
}

// Quantiles are latency percentiles from histogram buckets, milliseconds.
type Quantiles struct {
	P50, P95, P99 float64
	// Bounds is how many finite bucket bounds the histogram has; the
	// percentiles are no finer than the bucket they fall in.
	Bounds int
	// Capped is true when a percentile fell in the +Inf bucket: it is
	// reported as the highest finite bound, a lower bound of the truth.
	Capped bool
}

// Delta is what the server counted for sel from start to end. A series
// absent from start was born in the window and counts from zero; a count
// that went down (the server restarted) is an error.
func Delta(start, end Families, sel Selector) (Window, error) {
	w := Window{ByStatus: map[string]int64{}}
	ef, ok := end[sel.Family]
	if !ok {
		return w, fmt.Errorf("no metric family %s in the end scrape", sel.Family)
	}
	before := map[string]*dto.Metric{}
	if sf := start[sel.Family]; sf != nil {
		for _, m := range sf.GetMetric() {
			before[seriesKey(m)] = m
		}
	}
	var buckets map[float64]float64 // upper bound -> cumulative count delta
	for _, m := range ef.GetMetric() {
		if !matches(m, sel.Match) {
			continue
		}
		w.Series++
		prev := before[seriesKey(m)]
		n := count(m) - count(prev)
		if n < 0 {
			return w, fmt.Errorf("%s: the count of series {%s} went down from %.0f to %.0f (did the server restart?)",
				sel.Family, seriesKey(m), count(prev), count(m))
		}
		w.Requests += int64(math.Round(n))
		status := label(m, sel.Status)
		w.ByStatus[status] += int64(math.Round(n))
		if !okStatus(status) {
			w.Errors += int64(math.Round(n))
		}
		if m.GetHistogram() != nil {
			if buckets == nil {
				buckets = map[float64]float64{}
			}
			addBuckets(buckets, m, prev)
		}
	}
	if w.Series == 0 {
		return w, fmt.Errorf("no series of %s matches %s", sel.Family, sel)
	}
	for s, n := range w.ByStatus {
		if n == 0 {
			delete(w.ByStatus, s)
		}
	}
	if buckets != nil && w.Requests > 0 {
		w.Latency = quantiles(buckets)
	}
	return w, nil
}

// count is a series' request count: a histogram's or summary's sample
// count, or a counter's value; 0 for nil.
func count(m *dto.Metric) float64 {
	switch {
	case m == nil:
		return 0
	case m.GetHistogram() != nil:
		h := m.GetHistogram()
		if h.SampleCountFloat != nil {
			return h.GetSampleCountFloat()
		}
		return float64(h.GetSampleCount())
	case m.GetSummary() != nil:
		return float64(m.GetSummary().GetSampleCount())
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

// addBuckets adds the bucket deltas of m since prev to b. The +Inf bucket
// is the sample count when the exposition leaves it out.
func addBuckets(b map[float64]float64, m, prev *dto.Metric) {
	cum := func(x *dto.Metric) map[float64]float64 {
		out := map[float64]float64{}
		if x == nil || x.GetHistogram() == nil {
			return out
		}
		for _, bk := range x.GetHistogram().GetBucket() {
			v := float64(bk.GetCumulativeCount())
			if bk.CumulativeCountFloat != nil {
				v = bk.GetCumulativeCountFloat()
			}
			out[bk.GetUpperBound()] = v
		}
		if _, ok := out[math.Inf(1)]; !ok {
			out[math.Inf(1)] = count(x)
		}
		return out
	}
	now, was := cum(m), cum(prev)
	for ub, v := range now {
		b[ub] += v - was[ub]
	}
}

// quantiles computes P50, P95 and P99 from cumulative bucket counts.
func quantiles(b map[float64]float64) *Quantiles {
	bounds := make([]float64, 0, len(b))
	for ub := range b {
		bounds = append(bounds, ub)
	}
	slices.Sort(bounds)
	q := &Quantiles{Bounds: len(bounds) - 1}
	var capped bool
	q.P50, capped = quantile(0.50, bounds, b)
	q.Capped = q.Capped || capped
	q.P95, capped = quantile(0.95, bounds, b)
	q.Capped = q.Capped || capped
	q.P99, capped = quantile(0.99, bounds, b)
	q.Capped = q.Capped || capped
	return q
}

// quantile is PromQL's histogram_quantile over sorted bounds (the last
// +Inf), in milliseconds: the bucket where the rank falls, interpolated
// linearly between its lower and upper bound (the first bucket's lower
// bound is 0). A rank in the +Inf bucket gives the highest finite bound.
func quantile(phi float64, bounds []float64, cum map[float64]float64) (float64, bool) {
	total := cum[bounds[len(bounds)-1]]
	rank := phi * total
	lower, below := 0.0, 0.0
	for i, ub := range bounds {
		c := cum[ub]
		if c >= rank && c > below {
			if math.IsInf(ub, 1) {
				if i == 0 {
					return 0, true
				}
				return bounds[i-1] * 1000, true
			}
			return 1000 * (lower + (ub-lower)*(rank-below)/(c-below)), false
		}
		lower, below = ub, max(below, c)
	}
	return 1000 * lower, false
}

// matches reports whether m carries every label of match with its value.
func matches(m *dto.Metric, match map[string]string) bool {
	for k, v := range match {
		if label(m, k) != v {
			return false
		}
	}
	return true
}

// label is m's value of label name; "" when absent.
func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// seriesKey identifies a series by its labels, le and quantile aside.
func seriesKey(m *dto.Metric) string {
	lps := slices.Clone(m.GetLabel())
	slices.SortFunc(lps, func(a, b *dto.LabelPair) int { return cmp.Compare(a.GetName(), b.GetName()) })
	var sb strings.Builder
	for i, lp := range lps {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "%s=%q", lp.GetName(), lp.GetValue())
	}
	return sb.String()
}

// okStatus: a 2xx or 3xx status (a redirect is an answer, not an error).
func okStatus(s string) bool {
	return len(s) == 3 && (s[0] == '2' || s[0] == '3')
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TolerancePct is how far, in percent of loadstep's count, the server's
// count may differ beyond the edges' slack before the report flags it.
const TolerancePct = 1.0

// EdgeSlack is how many requests the two counts may honestly differ by
// at a step's window edges: at the start, up to one request per
// connection sent in the warmup and still in flight (the server may count
// it, loadstep does not), and the requests that completed between the
// window's start and the end of the start scrape (qps times that lag:
// loadstep counts them, the start scrape may already hold them); at the
// end, up to one per connection the server had answered but not yet
// counted when the end scrape came (it follows loadstep's drain).
func EdgeSlack(connections int, qps float64, start time.Time, scrape schema.ServerScrape) int64 {
	lag := scrape.At.Sub(start).Seconds() + scrape.DurationMS/1000
	return int64(2*connections) + int64(math.Ceil(qps*max(lag, 0)))
}

// Agrees reports whether the server's count n agrees with loadstep's
// count want within TolerancePct plus slack.
func Agrees(n, want, slack int64) bool {
	d := math.Abs(float64(n - want))
	return d <= TolerancePct/100*float64(want)+float64(slack)
}
