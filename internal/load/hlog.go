package load

import (
	"fmt"
	"io"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/idpbench/idpbench/internal/schema"
)

// Tags of the interval histograms in an HdrHistogram interval log.
const (
	HlogTagService   = "service"   // Step.Intervals[].Histogram: service time
	HlogTagCorrected = "corrected" // Step.Intervals[].CorrectedHistogram (rate mode)
)

// WriteHlog writes a step's per-interval histograms as an HdrHistogram
// interval log (format version 1.3, hdrhistogram-go's HistogramLogWriter):
// a StartTime and a BaseTime comment for the window start, then one tagged
// line per interval and histogram: "corrected" then "service" in rate
// mode, "service" in closed loop. Values are ns; the max column is ms.
// Interval timestamps are seconds relative to BaseTime, which is the window
// start rounded down to a whole second (the comment carries whole seconds,
// so a reader recovers the absolute times exactly).
func WriteHlog(w io.Writer, s *schema.Step) error {
	lw := hdrhistogram.NewHistogramLogWriter(w)
	startMS := s.Start.UnixMilli()
	baseMS := startMS - startMS%1000
	lw.SetBaseTime(baseMS)
	header := []func() error{
		lw.OutputLogFormatVersion,
		func() error {
			return lw.OutputComment(fmt.Sprintf("[idpbench loadstep: scenario %s, target %s, connections %d, rate_rps %g, latency_model %s, values in ns]",
				s.Scenario, s.TargetURL, s.Connections, s.RateRPS, s.LatencyModel))
		},
		func() error { return lw.OutputStartTime(startMS) },
		func() error { return lw.OutputBaseTime(baseMS) },
		lw.OutputLegend,
	}
	for _, f := range header {
		if err := f(); err != nil {
			return fmt.Errorf("writing interval log: %w", err)
		}
	}
	for i, iv := range s.Intervals {
		from := startMS + int64(iv.TS*1000+0.5)
		to := startMS + int64((iv.TS+iv.LengthS)*1000+0.5)
		for _, e := range hlogEntries(iv) {
			if err := writeInterval(lw, e.hist, e.tag, from, to); err != nil {
				return fmt.Errorf("writing interval %d (%s) to the interval log: %w", i, e.tag, err)
			}
		}
	}
	return nil
}

type hlogEntry struct{ tag, hist string }

// hlogEntries are the histograms of one interval, in log order.
func hlogEntries(iv schema.Interval) []hlogEntry {
	if iv.CorrectedHistogram != "" {
		return []hlogEntry{{HlogTagCorrected, iv.CorrectedHistogram}, {HlogTagService, iv.Histogram}}
	}
	return []hlogEntry{{HlogTagService, iv.Histogram}}
}

func writeInterval(lw *hdrhistogram.HistogramLogWriter, enc, tag string, fromMS, toMS int64) error {
	h, err := schema.DecodeHistogram(enc)
	if err != nil {
		return err
	}
	h.SetTag(tag)
	h.SetStartTimeMs(fromMS)
	h.SetEndTimeMs(toMS)
	return lw.OutputIntervalHistogram(h)
}
