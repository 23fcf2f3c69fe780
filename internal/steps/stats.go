package steps

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/stats"
)

// Window is a measured window [Start, End] of one step.
type Window struct {
	Start, End time.Time
}

// Contains reports whether t falls inside the window, both ends included.
func (w Window) Contains(t time.Time) bool {
	return !t.Before(w.Start) && !t.After(w.End)
}

// inWindows reports whether t falls inside any of the windows.
func inWindows(t time.Time, ws []Window) bool {
	for _, w := range ws {
		if w.Contains(t) {
			return true
		}
	}
	return false
}

// SamplesIn returns the samples whose time falls inside any of the windows,
// in their original order.
func SamplesIn(samples []schema.Sample, ws []Window) []schema.Sample {
	var out []schema.Sample
	for _, s := range samples {
		if inWindows(s.T, ws) {
			out = append(out, s)
		}
	}
	return out
}

// Spread is the minimum, median and maximum of a series and its length.
type Spread struct {
	Min, Median, Max float64
	N                int
}

// Pct is the spread in percent of the median: how far the farther of
// min and max lies from it (0 for a zero median).
func (s Spread) Pct() float64 {
	if s.Median == 0 {
		return 0
	}
	return 100 * math.Max(s.Max/s.Median-1, 1-s.Min/s.Median)
}

// SpreadOf summarises vs; N is 0 for an empty series.
func SpreadOf(vs []float64) Spread {
	med, ok := stats.Median(vs)
	if !ok {
		return Spread{}
	}
	return Spread{Min: slices.Min(vs), Median: med, Max: slices.Max(vs), N: len(vs)}
}

// IntervalTolerance is how far apart (seconds) one interval's end and the
// next one's start may be and still count as contiguous: t_s and length_s
// are rounded in the record.
const IntervalTolerance = 0.001

// IntervalGaps describes every break in a step's interval series: a missing
// stretch between consecutive intervals, a series that starts late or ends
// early, and intervals without requests (nothing was sent: a full stall).
// An empty result means the intervals cover the measured window without gaps.
func IntervalGaps(s *schema.Step) []string {
	var gaps []string
	end := 0.0
	for _, iv := range s.Intervals {
		if iv.TS-end > IntervalTolerance {
			gaps = append(gaps, fmt.Sprintf("no interval for %s–%s", Secs(end), Secs(iv.TS)))
		}
		if iv.TS < end-IntervalTolerance {
			gaps = append(gaps, fmt.Sprintf("intervals overlap at %s", Secs(iv.TS)))
		}
		if iv.Requests == 0 {
			gaps = append(gaps, fmt.Sprintf("no requests in %s–%s", Secs(iv.TS), Secs(iv.TS+IntervalLength(s, iv))))
		}
		end = max(end, iv.TS+IntervalLength(s, iv))
	}
	if s.DurationS-end > IntervalTolerance && s.Status == schema.StatusComplete {
		gaps = append(gaps, fmt.Sprintf("no interval for %s–%s", Secs(end), Secs(s.DurationS)))
	}
	return gaps
}

// IntervalLength is the interval's length, the step's interval_s for
// records that do not state it.
func IntervalLength(s *schema.Step, iv schema.Interval) float64 {
	if iv.LengthS > 0 {
		return iv.LengthS
	}
	return s.IntervalS
}

// Secs renders seconds compactly: "40 s", "12.5 s".
func Secs(v float64) string {
	return FormatSeconds(math.Round(v*10) / 10)
}
