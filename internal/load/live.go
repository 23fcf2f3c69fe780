package load

import (
	"math"
	"math/bits"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/idpbench/idpbench/internal/schema"
)

// Live phases (LiveFigures.Phase).
const (
	LiveWarmup   = "warmup"   // before the measured window
	LiveMeasured = "measured" // inside it
	LiveDrain    = "drain"    // after its end, requests in flight completing
	LiveDone     = "done"     // every worker has stopped: the last tick
)

// LiveObserver is shown a running step's figures (Config.Live): once as the
// workers start, then once per interval, and a last time once every worker
// has stopped, with the figures the step will record, before
// WindowObserver.StepDrained. Tick runs on a goroutine of the engine's own
// that only reads what the request path has already counted: the live
// counters of the progress line and the intervals the workers have handed
// over. It must return at once (copy and go); it is never called
// concurrently with itself.
type LiveObserver interface {
	// LatencyBounds are the upper bounds (inclusive), ascending, of the
	// latency buckets the figures count in; asked once, before the start.
	LatencyBounds() []time.Duration
	Tick(LiveFigures)
}

// LiveFigures are a step's running figures at one tick. Counts only grow
// from tick to tick; the window's are final when Phase is LiveDone.
type LiveFigures struct {
	At    time.Time
	Phase string // LiveWarmup | LiveMeasured | LiveDrain | LiveDone
	// Warmup is the requests completed before the window started and the
	// failed ones among them, by class; not in the step record. Requests
	// (iterations) of the warmup are counted when they complete.
	Warmup LiveCounts
	// Window is the measured window's requests (iterations), attributed as
	// the step attributes them, of the intervals that have ended at least
	// half an interval ago (their late completions added as they come).
	// At LiveDone it is the whole window: the step's requests and errors.
	Window        LiveCounts
	ConnectErrors schema.ConnectErrors // the window's failed connection attempts and unsent requests
	StatusCodes   map[int]int64        // the window's responses by HTTP status; the observer's to keep
	// Latency is the window's service time histogram (the step's
	// histogram), over the same intervals as Window.
	Latency LiveLatency
	// RatePerS is the requests completed per second since the previous
	// tick, in any phase (as the progress line and warmup_qps count them).
	RatePerS float64
	// CorrectedMS, rate mode only (NaN otherwise, or without an answer
	// since the previous tick): the mean latency from the intended send
	// time of the requests answered since the previous tick, ms. Service
	// times stay flat while a product falls behind its schedule; this
	// grows tick after tick (the sustain rule's queue, live).
	CorrectedMS float64
}

// LiveCounts are requests and their failures by class.
type LiveCounts struct {
	Requests int64
	Errors   schema.Errors
}

// LiveLatency is a cumulative latency histogram.
type LiveLatency struct {
	// Buckets[i] counts the latencies at most LatencyBounds()[i]
	// (cumulative), to the step histogram's precision: a value counts by
	// the highest value HdrHistogram holds as equivalent to it (3
	// significant digits), as the step's percentiles do.
	Buckets []int64
	Count   int64         // every latency recorded
	Sum     time.Duration // their sum, each at its bucket's median equivalent value (as HdrHistogram's Mean)
}

// liveView is the live observer's side of a running step, owned by the
// live goroutine.
type liveView struct {
	cuts []int      // by bound: the counts indexes below it hold the latencies at most the bound (hdrCut)
	per  []liveHist // the window's intervals' buckets, by index
	at   time.Time  // the previous tick
	sent int64      // live completions at the previous tick
	// Rate mode: the corrected latency summed (ns) and the answers at the previous tick.
	correctedNS, answered int64
}

// liveHist is one interval's histogram in the live buckets, recomputed
// when the interval's histogram has grown.
type liveHist struct {
	n       int64   // the histogram's count when last computed
	buckets []int64 // not cumulative: buckets[i] counts bound i-1 < v <= bound i; the last beyond every bound
	sum     float64 // ns
}

// startLive shows the figures to cfg.Live as the workers start and at
// every interval boundary from launch plus half an interval, and returns
// the function that stops it and shows the last figures.
func (e *engine) startLive() (stop func()) {
	if e.cfg.Live == nil {
		return func() {}
	}
	v := &liveView{at: e.plan.launch}
	for _, b := range e.cfg.Live.LatencyBounds() {
		v.cuts = append(v.cuts, hdrCut(b.Nanoseconds()))
	}
	e.cfg.Live.Tick(e.liveFigures(v, e.plan.launch, false))
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for {
			timer.Reset(time.Until(e.nextLiveTick(time.Now())))
			select {
			case <-done:
				return
			case now := <-timer.C:
				e.cfg.Live.Tick(e.liveFigures(v, now, false))
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		e.cfg.Live.Tick(e.liveFigures(v, time.Now(), true))
	}
}

// liveLag is how long after an interval ends its figures are shown: time
// for the workers to hand it over, which each does at its first request
// of the next interval.
func (e *engine) liveLag() time.Duration { return e.plan.interval / 2 }

// nextLiveTick is the first tick after t: an interval boundary from
// launch, plus the lag.
func (e *engine) nextLiveTick(t time.Time) time.Time {
	iv := e.plan.interval
	n := (t.Sub(e.plan.launch)-e.liveLag())/iv + 1
	return e.plan.launch.Add(max(n, 1)*iv + e.liveLag())
}

// liveFigures are the figures at now; final: every worker has stopped.
func (e *engine) liveFigures(v *liveView, now time.Time, final bool) LiveFigures {
	f := LiveFigures{At: now, Phase: e.livePhase(now, final), StatusCodes: map[int]int64{}}
	t := e.liveTotals()
	warm := t
	if b := e.base.Load(); b != nil {
		warm = *b
	}
	f.Warmup = LiveCounts{Requests: warm.sent, Errors: warm.errors()}
	if d := now.Sub(v.at).Seconds(); d > 0 {
		f.RatePerS = float64(t.sent-v.sent) / d
	}
	v.at, v.sent = now, t.sent
	f.CorrectedMS = math.NaN()
	if e.tallies.rate {
		var sum, n int64
		for i := range e.live {
			sum, n = sum+e.live[i].correctedNS.Load(), n+e.live[i].answered.Load()
		}
		if n > v.answered {
			f.CorrectedMS = float64(sum-v.correctedNS) / float64(n-v.answered) / 1e6
		}
		v.correctedNS, v.answered = sum, n
	}
	ended := e.endedIntervals(now, final)
	var c counts
	c.codes = f.StatusCodes
	e.tallies.mu.Lock()
	for k, tl := range e.tallies.per[:min(ended, len(e.tallies.per))] {
		if tl != nil {
			c.add(&tl.counts)
			v.histogram(k, tl.hist)
		}
	}
	e.tallies.mu.Unlock()
	f.Window = LiveCounts{Requests: c.requests, Errors: c.errors}
	f.ConnectErrors = c.connect
	f.Latency = v.latency()
	return f
}

// livePhase is the step's phase at now.
func (e *engine) livePhase(now time.Time, final bool) string {
	switch {
	case final:
		return LiveDone
	case e.base.Load() == nil:
		return LiveWarmup
	case now.Before(e.plan.end()):
		return LiveMeasured
	}
	return LiveDrain
}

// endedIntervals is how many of the window's intervals ended at least the
// lag before now: all of them once every worker has stopped.
func (e *engine) endedIntervals(now time.Time, final bool) int {
	switch {
	case e.base.Load() == nil && !final:
		return 0
	case final || !now.Before(e.plan.end().Add(e.liveLag())):
		return math.MaxInt
	}
	return max(0, int(now.Add(-e.liveLag()).Sub(e.plan.start())/e.plan.interval))
}

// histogram brings interval k's buckets up to date with h; the tallies
// lock is held. It walks a copy of h's counts (one allocation) rather than
// h.Distribution(), which grows a slice of every bucket up to the largest
// value: ten times the garbage and time (BenchmarkLiveTick).
func (v *liveView) histogram(k int, h *hdrhistogram.Histogram) {
	for len(v.per) <= k {
		v.per = append(v.per, liveHist{buckets: make([]int64, len(v.cuts)+1)})
	}
	lh := &v.per[k]
	if h.TotalCount() == lh.n {
		return
	}
	clear(lh.buckets)
	lh.sum = 0
	b := 0
	for i, n := range h.Export().Counts {
		if n == 0 {
			continue
		}
		for b < len(v.cuts) && i >= v.cuts[b] {
			b++
		}
		lh.buckets[b] += n
		lo, width := hdrRange(i)
		lh.sum += float64(n) * float64(lo+width>>1) // the median equivalent value, as Mean() takes it
	}
	lh.n = h.TotalCount()
}

// The counts layout of HdrHistogram (that of its V2 encoding) in the step
// geometry, schema.NewHistogram: unit 1 ns, 3 significant digits, so 2048
// sub-buckets; bucket k > 0 holds values 1024<<k to 2048<<k - 1 in 1024
// ranges of width 1<<k, bucket 0 values 0 to 2047 one by one.
// TestHdrLayout checks it against the library.
const (
	hdrHalfMag = 10 // log2 of half the sub-bucket count
	hdrHalf    = 1 << hdrHalfMag
)

// hdrIndex is the counts index holding v.
func hdrIndex(v int64) int {
	k := 64 - bits.LeadingZeros64(uint64(v)|(2*hdrHalf-1)) - (hdrHalfMag + 1)
	return (k+1)<<hdrHalfMag + int(v>>k) - hdrHalf
}

// hdrRange is the lowest value counts index i holds and the width of its
// range.
func hdrRange(i int) (lowest, width int64) {
	k, sub := i>>hdrHalfMag-1, i&(hdrHalf-1)+hdrHalf
	if k < 0 {
		k, sub = 0, sub-hdrHalf
	}
	return int64(sub) << k, 1 << k
}

// hdrCut is how many counts indexes hold only values at most b, by the
// highest value each holds (as the step's percentiles report a value).
func hdrCut(b int64) int {
	i := hdrIndex(b)
	if lo, width := hdrRange(i); lo+width-1 == b {
		return i + 1
	}
	return i
}

// latency sums the intervals' buckets into a cumulative histogram.
func (v *liveView) latency() LiveLatency {
	l := LiveLatency{Buckets: make([]int64, len(v.cuts))}
	var sum float64
	for _, lh := range v.per {
		var cum int64
		for i, n := range lh.buckets {
			cum += n
			if i < len(l.Buckets) {
				l.Buckets[i] += cum
			}
		}
		l.Count += lh.n
		sum += lh.sum
	}
	l.Sum = time.Duration(sum)
	return l
}
