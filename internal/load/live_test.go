package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// liveRecorder keeps every tick it is shown.
type liveRecorder struct {
	bounds []time.Duration
	mu     sync.Mutex
	ticks  []LiveFigures
}

func (r *liveRecorder) LatencyBounds() []time.Duration { return r.bounds }

func (r *liveRecorder) Tick(f LiveFigures) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ticks = append(r.ticks, f)
}

// halfFailing answers every other request 500, the others a discovery
// document.
func halfFailing(t *testing.T) string {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			w.WriteHeader(http.StatusInternalServerError)
		}
		fmt.Fprint(w, `{"issuer":"http://op/"}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestLiveFigures: the live view is shown a tick as the workers start,
// ticks whose counts only grow, and a last tick, after every worker has
// stopped, that holds exactly the step's counts, errors by class, status
// codes and latency count. No assertion depends on when a tick fell.
func TestLiveFigures(t *testing.T) {
	url := halfFailing(t)
	run := func(t *testing.T, engine string, rate float64) {
		c := testConfig(t, url, schema.ScenarioDiscovery)
		c.Engine, c.Rate = engine, rate
		c.Warmup, c.Duration, c.Interval = 300*time.Millisecond, 400*time.Millisecond, 100*time.Millisecond
		rec := &liveRecorder{bounds: []time.Duration{time.Nanosecond, time.Millisecond, time.Hour}}
		c.Live = rec
		s := mustRun(t, c)
		checkLive(t, s, rec.ticks)
		var corrected int
		for _, f := range rec.ticks {
			if !math.IsNaN(f.CorrectedMS) {
				corrected++
			}
		}
		if (rate > 0) != (corrected > 0) {
			t.Errorf("rate %v: %d of %d ticks with a corrected latency; want some in rate mode only", rate, corrected, len(rec.ticks))
		}
	}
	for _, eng := range engines {
		t.Run(eng, func(t *testing.T) { run(t, eng, 0) })
	}
	t.Run("rate", func(t *testing.T) { run(t, EngineRaw, 400) })
}

func checkLive(t *testing.T, s *schema.Step, ticks []LiveFigures) {
	t.Helper()
	if len(ticks) < 2 || ticks[0].Phase != LiveWarmup || ticks[len(ticks)-1].Phase != LiveDone {
		t.Fatalf("%d ticks, first %+v, last %+v: want the warmup first and done last", len(ticks), ticks[0], ticks[len(ticks)-1])
	}
	for i := 1; i < len(ticks); i++ {
		a, b := ticks[i-1], ticks[i]
		if b.Window.Requests < a.Window.Requests || b.Warmup.Requests < a.Warmup.Requests ||
			b.Latency.Count < a.Latency.Count || b.Window.Errors.Total() < a.Window.Errors.Total() || b.At.Before(a.At) {
			t.Errorf("tick %d went back: %+v after %+v", i, b, a)
		}
		for k := range b.Latency.Buckets {
			if b.Latency.Buckets[k] < a.Latency.Buckets[k] {
				t.Errorf("tick %d: bucket %d went back from %d to %d", i, k, a.Latency.Buckets[k], b.Latency.Buckets[k])
			}
		}
		if b.Phase == LiveDone && i != len(ticks)-1 {
			t.Errorf("tick %d of %d is done", i, len(ticks))
		}
		if b.Phase == LiveWarmup && b.Window.Requests != 0 {
			t.Errorf("tick %d: warmup tick with %d window requests", i, b.Window.Requests)
		}
	}
	f := ticks[len(ticks)-1]
	if f.Window.Requests != s.Requests || f.Window.Errors != s.Errors || f.ConnectErrors != s.ConnectErrors {
		t.Errorf("last tick: %+v, connect %+v; step: requests %d errors %+v connect %+v",
			f.Window, f.ConnectErrors, s.Requests, s.Errors, s.ConnectErrors)
	}
	if s.Errors.Non2xx == 0 || s.OK == 0 {
		t.Errorf("step: ok %d, errors %+v: the server fails every other request", s.OK, s.Errors)
	}
	codes := map[string]int64{}
	for code, n := range f.StatusCodes {
		codes[strconv.Itoa(code)] = n
	}
	if fmt.Sprint(codes) != fmt.Sprint(s.StatusCodes) {
		t.Errorf("last tick's status codes %v, step's %v", codes, s.StatusCodes)
	}
	h, err := schema.DecodeHistogram(s.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	l := f.Latency
	if l.Count != h.TotalCount() || l.Buckets[0] != 0 || l.Buckets[2] != l.Count || l.Buckets[1] > l.Count {
		t.Errorf("last tick's latency: buckets %v count %d; step histogram: %d values", l.Buckets, l.Count, h.TotalCount())
	}
	if mean := h.Mean() * float64(h.TotalCount()); math.Abs(float64(l.Sum)-mean) > 0.01*mean {
		t.Errorf("latency sum %s, step histogram's %s", l.Sum, time.Duration(mean))
	}
	w := f.Warmup
	if w.Errors.Total() != w.Errors.Non2xx || w.Errors.Total() > w.Requests {
		t.Errorf("warmup: %d requests, errors %+v: want non2xx only", w.Requests, w.Errors)
	}
}

// BenchmarkLiveTick is one tick of the live view late in a long step: a
// minute of 1 s intervals of 40,000 requests each (latencies 0.2 ms plus
// an exponential tail of mean 0.4 ms, one 50 ms outlier per interval), of
// which one interval has grown since the previous tick, as in a run. Its
// time per op is what --metrics-addr costs the driver per interval
// besides the scrapes (bench --metrics-overhead measures the whole).
func BenchmarkLiveTick(b *testing.B) {
	e := &engine{cfg: &Config{}, live: make([]liveCount, 128)}
	e.plan.launch, e.plan.interval = time.Now().Add(-2*time.Minute), time.Second
	e.plan.setWindow(0, time.Hour)
	e.base.Store(&liveSum{})
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range 60 {
		t := e.tallies.at(k)
		for range 40000 {
			t.hist.RecordValue(int64(200e3 + rng.ExpFloat64()*400e3))
		}
		t.hist.RecordValue(50e6)
		t.requests, t.ok, t.codes[200] = 40001, 40001, 40001
	}
	v := &liveView{}
	for _, b := range liveBounds() {
		v.cuts = append(v.cuts, hdrCut(b))
	}
	e.liveFigures(v, time.Now(), false)
	b.ReportAllocs()
	for b.Loop() {
		e.tallies.per[59].hist.RecordValue(300e3)
		e.liveFigures(v, time.Now(), false)
	}
}

// liveBounds are internal/live's buckets in ns: 1-2-5 from 100 µs to 60 s.
func liveBounds() []int64 {
	var b []int64
	for d := int64(100e3); d < 10e9; d *= 10 {
		b = append(b, d, 2*d, 5*d)
	}
	return append(b, 10e9, 20e9, 60e9)
}

// TestHdrLayout: the live view's reading of a histogram's counts agrees
// with the library's own buckets (Distribution): every bucket's range, and
// the latencies each live bucket counts, on values from 1 ns to 60 s and
// the bounds themselves and their neighbours.
func TestHdrLayout(t *testing.T) {
	h := schema.NewHistogram()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		h.RecordValue(int64(math.Exp(rng.Float64() * math.Log(schema.HistHighestNS))))
	}
	for _, b := range liveBounds() {
		h.RecordValues(b-1, 3)
		h.RecordValues(b, 5)
		h.RecordValues(b+1, 7)
	}
	counts := h.Export().Counts
	bars := h.Distribution()
	if len(bars) > len(counts) {
		t.Fatalf("%d bars, %d counts", len(bars), len(counts))
	}
	for i, bar := range bars {
		lo, width := hdrRange(i)
		if bar.From != lo || bar.To != lo+width-1 || bar.Count != counts[i] || hdrIndex(bar.From) != i || hdrIndex(bar.To) != i {
			t.Fatalf("index %d: library [%d, %d] count %d; live [%d, %d] count %d, index of its ends %d, %d",
				i, bar.From, bar.To, bar.Count, lo, lo+width-1, counts[i], hdrIndex(bar.From), hdrIndex(bar.To))
		}
	}
	v := &liveView{}
	for _, b := range liveBounds() {
		v.cuts = append(v.cuts, hdrCut(b))
	}
	v.histogram(0, h)
	got := v.latency()
	for k, b := range liveBounds() {
		var want int64
		for _, bar := range bars {
			if bar.To <= b {
				want += bar.Count
			}
		}
		if got.Buckets[k] != want {
			t.Errorf("bound %d ns: %d latencies, the library's buckets hold %d at most it", b, got.Buckets[k], want)
		}
	}
	if got.Count != h.TotalCount() {
		t.Errorf("count %d, histogram %d", got.Count, h.TotalCount())
	}
	if mean := h.Mean() * float64(h.TotalCount()); math.Abs(float64(got.Sum)-mean) > 1e-9*mean {
		t.Errorf("sum %v, the library's mean times count %v", float64(got.Sum), mean)
	}
}
