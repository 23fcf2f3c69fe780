package load

import (
	"bytes"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/idpbench/idpbench/internal/schema"
)

// TestHlogDecodes: the interval log, read back with hdrhistogram-go's own
// HistogramLogReader, holds exactly the step's interval histograms, tagged,
// at the intervals' absolute times.
func TestHlogDecodes(t *testing.T) {
	for _, rate := range []float64{0, 200} {
		c, _ := fakeConfig(t, 2*time.Millisecond)
		c.Rate, c.Duration, c.Interval = rate, 350*time.Millisecond, 100*time.Millisecond
		s := mustRun(t, c)
		var buf bytes.Buffer
		if err := WriteHlog(&buf, s); err != nil {
			t.Fatal(err)
		}
		text := buf.String()
		for _, want := range []string{"#[Histogram log format version 1.3]\n", "#[StartTime: ", "#[BaseTime: "} {
			if !strings.Contains(text, want) {
				t.Errorf("rate %v: log lacks %q", rate, want)
			}
		}
		var want []*hdrhistogram.Histogram
		var tags []string
		for _, iv := range s.Intervals {
			if rate > 0 {
				want, tags = append(want, decode(t, iv.CorrectedHistogram)), append(tags, HlogTagCorrected)
			}
			want, tags = append(want, decode(t, iv.Histogram)), append(tags, HlogTagService)
		}
		got := readHlog(t, &buf)
		if len(got) != len(want) || len(s.Intervals) != 4 {
			t.Fatalf("rate %v: log holds %d histograms, want %d (%d intervals)", rate, len(got), len(want), len(s.Intervals))
		}
		var total int64
		// The reader truncates start+length (float seconds) to ms: the
		// end may come back 1 ms short.
		for i, h := range got {
			iv := s.Intervals[i/(len(got)/len(s.Intervals))]
			start := s.Start.UnixMilli() + int64(iv.TS*1000+0.5)
			end := s.Start.UnixMilli() + int64((iv.TS+iv.LengthS)*1000+0.5)
			if h.Tag() != tags[i] || h.TotalCount() != want[i].TotalCount() || !h.Equals(want[i]) ||
				h.StartTimeMs() != start || h.EndTimeMs() < end-1 || h.EndTimeMs() > end {
				t.Errorf("rate %v histogram %d: tag %q count %d [%d, %d] ms; want %q count %d [%d, %d] ms",
					rate, i, h.Tag(), h.TotalCount(), h.StartTimeMs(), h.EndTimeMs(), tags[i], want[i].TotalCount(), start, end)
			}
			if h.Tag() == HlogTagService {
				total += h.TotalCount()
			}
		}
		if total != s.OK || total == 0 {
			t.Errorf("rate %v: service histograms hold %d values, the step %d responses", rate, total, s.OK)
		}
	}
}

func decode(t *testing.T, enc string) *hdrhistogram.Histogram {
	t.Helper()
	h, err := schema.DecodeHistogram(enc)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// readHlog reads every interval histogram of a log.
func readHlog(t *testing.T, buf *bytes.Buffer) []*hdrhistogram.Histogram {
	t.Helper()
	r := hdrhistogram.NewHistogramLogReader(buf)
	var hs []*hdrhistogram.Histogram
	for range 1000 {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("reading the log: %v", err)
		}
		if h == nil {
			return hs
		}
		hs = append(hs, h)
	}
	t.Fatal("log does not end")
	return nil
}
