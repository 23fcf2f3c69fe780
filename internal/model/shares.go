package model

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/stats"
	"github.com/idpbench/idpbench/internal/steps"
)

// ShareLatency is a cell's latency in rate mode at one share of its
// capacity (docs/design-methodology.md, "Latency at shares of capacity"): the windows
// loadstep ran at Share percent of the capacity, open loop, latency from
// each request's intended send time.
type ShareLatency struct {
	Share   int     // percent of the capacity
	RateRPS float64 // the intended rate (requests or iterations a second)
	QPS     float64 // the rate offered in the windows: their requests (those due in them) over their seconds
	// CompletedRPS is what the product completed a second in the windows
	// (their completed over their seconds); 0 for records without it.
	CompletedRPS float64
	Windows      []StepFile
	Seconds      int // the intervals the interval resamples
	// P50, P95 and P99 (ms) of the windows' corrected histograms merged,
	// each with a hierarchical bootstrap 95% interval (windows, then the
	// seconds within them); NA on each says why there is none.
	P50, P95, P99 Interval
	Late          int64 // requests sent more than 2 ms behind their schedule, or never
	// Sustained: every window kept up with its schedule (steps.Sustained).
	// A share that was not (Unsustained) has its verdict in NA and no
	// latency: its corrected latency is the length of a queue.
	Sustained, Unsustained bool
	// Verdict is the sustain rule's figures of the windows, in words (the
	// first not sustained, else the last).
	Verdict string
	Search  bool // the run's search measured it (label search=1)
	NA      string
}

// MinShareSeconds is the fewest one-second intervals a share's latency
// interval is resampled from.
const MinShareSeconds = 10

// ShareResamples is the bootstrap's resamples of a share's latency.
const ShareResamples = 1000

// shares adds to every cell its windows at shares of capacity (r.Other,
// phase=share), by share.
func (r *Report) shares() {
	by := map[cellKey]map[int][]StepFile{}
	for _, sf := range r.Other {
		s := sf.Step
		if s.Labels["phase"] != steps.PhaseShare {
			continue
		}
		p, err := strconv.Atoi(s.Labels["share"])
		if err != nil {
			continue
		}
		k := cellKey{sf.Product(), s.Scenario}
		if by[k] == nil {
			by[k] = map[int][]StepFile{}
		}
		by[k][p] = append(by[k][p], sf)
	}
	searches := map[cellKey]*schema.Search{}
	for _, sf := range r.Searches {
		searches[cellKey{sf.Search.Product, sf.Search.Scenario}] = sf.Search
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		c.Search = searches[cellKey{c.Product, c.Scenario.Name}]
		m := by[cellKey{c.Product, c.Scenario.Name}]
		for _, p := range slices.Sorted(maps.Keys(m)) {
			sl := shareLatency(p, m[p], c.Product+"/"+c.Scenario.Name)
			sl.NA = cmp.Or(sl.NA, offShare(sl, c.Capacity.Raw.Center))
			c.Shares = append(c.Shares, sl)
		}
	}
}

// offShare says why a share's windows do not stand for that share of the
// raw capacity the report shows (the run measures them against it), ""
// when they do: their intended rate is more than 5% away from it (a report
// rendered by other rules than the run's, which moved the capacity after
// the windows were measured against it, or a run from before the raw
// capacity was the target).
func offShare(sl ShareLatency, capacity float64) string {
	if capacity <= 0 || sl.RateRPS <= 0 {
		return ""
	}
	want := capacity * float64(sl.Share) / 100
	if math.Abs(sl.RateRPS/want-1) <= 0.05 {
		return ""
	}
	return fmt.Sprintf("measured at %s/s, %.0f%% of the raw capacity shown (%s): the run measured it against another capacity",
		steps.FormatQPS(sl.RateRPS), 100*sl.RateRPS/capacity, steps.FormatQPS(capacity))
}

// At is the cell's latency at share percent of its capacity, nil when it
// has none.
func (c Cell) At(share int) *ShareLatency {
	for i := range c.Shares {
		if c.Shares[i].Share == share {
			return &c.Shares[i]
		}
	}
	return nil
}

// shareLatency computes one share's figures from its windows; key seeds
// the bootstrap, so a report renders the same intervals every time.
func shareLatency(share int, files []StepFile, key string) ShareLatency {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b StepFile) int { return a.Step.Start.Compare(b.Step.Start) })
	sl := ShareLatency{Share: share, Windows: files, Sustained: true}
	var requests, completed int64
	var seconds float64
	merged := schema.NewHistogram()
	var windows [][][]gridBar // each window's seconds
	for _, f := range files {
		s := f.Step
		sl.RateRPS = max(sl.RateRPS, s.RateRPS)
		sl.NA = cmp.Or(sl.NA, steps.ShareNA(s))
		sl.Search = sl.Search || s.Labels["search"] == "1"
		sl.judge(s)
		requests += s.Requests
		if s.Completed != nil && completed >= 0 {
			completed += *s.Completed
		} else {
			completed = -1
		}
		seconds += s.End.Sub(s.Start).Seconds()
		if s.Late != nil {
			sl.Late += *s.Late
		}
		h, err := schema.DecodeHistogram(cmp.Or(s.CorrectedHistogram, s.Histogram))
		if err != nil {
			sl.NA = cmp.Or(sl.NA, "a window without a latency histogram ("+f.Path+")")
			continue
		}
		merged.Merge(h)
		var secs [][]gridBar
		for _, in := range s.Intervals {
			if b := gridOf(cmp.Or(in.CorrectedHistogram, in.Histogram)); len(b) > 0 {
				secs = append(secs, b)
			}
		}
		if len(secs) > 0 {
			windows = append(windows, secs)
			sl.Seconds += len(secs)
		}
	}
	if seconds > 0 {
		sl.QPS = float64(requests) / seconds
		sl.CompletedRPS = max(0, float64(completed)) / seconds
	}
	if sl.NA == "" && sl.Unsustained {
		sl.NA = fmt.Sprintf("not sustained at %s/s (%d%% of capacity): %s", steps.FormatQPS(sl.RateRPS), share, sl.Verdict)
	}
	if sl.NA != "" {
		return sl
	}
	lat := schema.Summarize(merged)
	sl.P50, sl.P95, sl.P99 = Interval{N: sl.Seconds, Center: lat.P50}, Interval{N: sl.Seconds, Center: lat.P95}, Interval{N: sl.Seconds, Center: lat.P99}
	if sl.Seconds < MinShareSeconds {
		why := fmt.Sprintf("%s, no %.0f%% interval: needs %d", steps.Plural(sl.Seconds, "second"), 100*CapacityConfidence, MinShareSeconds)
		sl.P50.NA, sl.P95.NA, sl.P99.NA = why, why, why
		return sl
	}
	lo, hi := bootQuantiles(windows, []float64{50, 95, 99}, key)
	sl.P50.Lo, sl.P95.Lo, sl.P99.Lo = lo[0], lo[1], lo[2]
	sl.P50.Hi, sl.P95.Hi, sl.P99.Hi = hi[0], hi[1], hi[2]
	return sl
}

// judge adds window s's sustain verdict (steps.Sustained): a share is
// sustained when every window is; a window the rule could not judge
// leaves the share without a latency too (NA says so).
func (sl *ShareLatency) judge(s *schema.Step) {
	v := steps.Sustained(s)
	switch {
	case !sl.Sustained:
	case v.Verdict == schema.SustainYes:
		sl.Verdict = fmt.Sprintf("growth %s ms/s, end +%s ms", steps.FormatMS(v.GrowthMSPerS), steps.FormatMS(v.EndBacklogMS))
	case v.Verdict == schema.SustainNo:
		sl.Sustained, sl.Unsustained = false, true
		sl.Verdict = fmt.Sprintf("its queue grew %s ms a second and ended %s ms above its lowest interval", steps.FormatMS(v.GrowthMSPerS), steps.FormatMS(v.EndBacklogMS))
	default:
		sl.Sustained, sl.Verdict = false, "not judged"
		sl.NA = cmp.Or(sl.NA, "not judged whether sustained: "+v.Why)
	}
}

// The latency grid the bootstrap adds seconds on: buckets 1% wide in
// nanoseconds (HdrHistogram's 3 digits are finer; 1% is well inside any
// interval the table shows).
const gridStep = 0.01

var gridLog = math.Log1p(gridStep)

// gridBar is a count of one grid bucket.
type gridBar struct {
	i int32
	n int64
}

// gridOf is a histogram (HdrHistogram V2, ns) on the grid; nil when it
// cannot be decoded or is empty.
func gridOf(enc string) []gridBar {
	if enc == "" {
		return nil
	}
	h, err := schema.DecodeHistogram(enc)
	if err != nil {
		return nil
	}
	var out []gridBar
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		v := max(float64(b.From+b.To)/2, 1)
		i := int32(math.Log(v) / gridLog)
		if n := len(out); n > 0 && out[n-1].i == i {
			out[n-1].n += b.Count
			continue
		}
		out = append(out, gridBar{i, b.Count})
	}
	return out
}

// bootQuantiles is the percentile bootstrap 95% interval (ms) of each
// quantile q (percent) of the windows' seconds merged: each resample
// draws len(windows) windows with replacement, then as many seconds of
// each drawn window with replacement as it has (a hierarchical bootstrap:
// Kalibera and Jones, ISMM 2013), so the interval holds the variation
// between windows as well as within them. Seeded from key.
func bootQuantiles(windows [][][]gridBar, qs []float64, key string) (lo, hi []float64) {
	top := int32(0)
	for _, w := range windows {
		for _, sec := range w {
			top = max(top, sec[len(sec)-1].i)
		}
	}
	counts := make([]int64, top+1)
	boot := stats.Resampler{Key: key, Stream: 0x2545f4914f6cdd1d, N: ShareResamples, Conf: CapacityConfidence}
	lo, hi, _ = boot.Run(len(qs), func(rng *rand.Rand, out []float64) bool {
		clear(counts)
		var total int64
		for range windows {
			w := windows[rng.IntN(len(windows))]
			for range w {
				for _, b := range w[rng.IntN(len(w))] {
					counts[b.i] += b.n
					total += b.n
				}
			}
		}
		for k, q := range qs {
			out[k] = gridQuantile(counts, total, q)
		}
		return true
	})
	return lo, hi
}

// gridQuantile is quantile q (percent) of grid counts, ms: the middle of
// the bucket that holds it.
func gridQuantile(counts []int64, total int64, q float64) float64 {
	want := int64(math.Ceil(q / 100 * float64(total)))
	var seen int64
	for i, n := range counts {
		seen += n
		if seen >= max(want, 1) {
			return math.Exp((float64(i)+0.5)*gridLog) / 1e6
		}
	}
	return 0
}
