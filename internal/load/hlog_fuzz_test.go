package load

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/idpbench/idpbench/internal/schema"
)

// fuzzStep builds a step of n intervals of ivMS ms from start: latencies
// (ns, up to 60 s) taken 4 bytes at a time from lat, each to the interval
// its first byte picks; in rate mode the corrected latency is the service
// latency plus the next 2 bytes in µs.
func fuzzStep(t *testing.T, startMS int64, ivMS uint16, n uint8, rate bool, lat []byte) *schema.Step {
	t.Helper()
	s := &schema.Step{Scenario: schema.ScenarioDiscovery, TargetURL: "http://127.0.0.1:4444/.well-known/openid-configuration",
		Connections: 2, Start: time.UnixMilli(startMS).UTC(), LatencyModel: schema.ModelClosedLoop}
	if rate {
		s.RateRPS, s.LatencyModel = 100, schema.ModelOpenLoop
	}
	service, corrected := make([]*hdrhistogram.Histogram, int(n)%4+1), make([]*hdrhistogram.Histogram, int(n)%4+1)
	for i := range service {
		service[i], corrected[i] = schema.NewHistogram(), schema.NewHistogram()
	}
	for ; len(lat) >= 6; lat = lat[6:] {
		i := int(lat[0]) % len(service)
		v := int64(binary.BigEndian.Uint32(lat))*13%int64(schema.HistHighestNS-1e9) + 1
		if err := service[i].RecordValue(v); err != nil {
			t.Fatal(err)
		}
		if err := corrected[i].RecordValue(v + int64(binary.BigEndian.Uint16(lat[4:]))*1000); err != nil {
			t.Fatal(err)
		}
	}
	length := float64(int(ivMS)+1) / 1000
	for i := range service {
		iv := schema.Interval{TS: float64(i) * length, LengthS: length, Histogram: encodeHist(t, service[i])}
		if rate {
			iv.CorrectedHistogram = encodeHist(t, corrected[i])
		}
		s.Intervals = append(s.Intervals, iv)
	}
	return s
}

func encodeHist(t *testing.T, h *hdrhistogram.Histogram) string {
	t.Helper()
	enc, err := schema.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// FuzzHlog: the interval log of any step, read back with hdrhistogram-go's
// HistogramLogReader, holds exactly its interval histograms (equal counts
// at every value), tagged, in order, at the intervals' absolute times.
// The reader truncates the float seconds it adds up (base time + offset)
// to ms: an end may come back 1 ms short, and from about 2038 on a start
// too (fuzzing found it at a start in 4194; the log's text is exact).
func FuzzHlog(f *testing.F) {
	f.Add(int64(1796032800000), uint16(999), uint8(3), false, []byte("\x00\x00\x4c\x4b\x40\x00\x01\x00\x98\x96\x80\x00"))
	f.Add(int64(1796032800123), uint16(99), uint8(4), true, bytes.Repeat([]byte("\x03\x01\x2d\xc6\xc0\x10"), 20))
	f.Add(int64(0), uint16(0), uint8(0), true, []byte{})
	f.Fuzz(func(t *testing.T, startMS int64, ivMS uint16, n uint8, rate bool, lat []byte) {
		startMS = int64(uint64(startMS) % 253402300799000) // 1970 to 9999
		s := fuzzStep(t, startMS, ivMS, n, rate, lat)
		var buf bytes.Buffer
		if err := WriteHlog(&buf, s); err != nil {
			t.Fatal(err)
		}
		r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(buf.Bytes()))
		for i, iv := range s.Intervals {
			start := startMS + int64(iv.TS*1000+0.5)
			end := startMS + int64((iv.TS+iv.LengthS)*1000+0.5)
			for _, e := range hlogEntries(iv) {
				h, err := r.NextIntervalHistogram()
				if err != nil || h == nil {
					t.Fatalf("interval %d %s: %v, %v\n%s", i, e.tag, h, err, buf.Bytes())
				}
				want, err := schema.DecodeHistogram(e.hist)
				if err != nil {
					t.Fatal(err)
				}
				if h.Tag() != e.tag || !h.Equals(want) || h.TotalCount() != want.TotalCount() ||
					h.StartTimeMs() < start-1 || h.StartTimeMs() > start || h.EndTimeMs() < end-1 || h.EndTimeMs() > end {
					t.Fatalf("interval %d: tag %q, %d values, [%d, %d] ms; want %q, %d, [%d, %d]\n%s",
						i, h.Tag(), h.TotalCount(), h.StartTimeMs(), h.EndTimeMs(), e.tag, want.TotalCount(), start, end, buf.Bytes())
				}
			}
		}
		if h, err := r.NextIntervalHistogram(); h != nil || err != nil {
			t.Fatalf("after the last interval: %v, %v", h, err)
		}
	})
}
