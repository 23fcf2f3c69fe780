package load

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/idpbench/idpbench/internal/schema"
)

// class is what became of one iteration.
type class int

const (
	classOK class = iota
	classNon2xx
	classSocket
	classTimeout
	classCheck
	classExhausted
	// Not requests (see unreachable.go): a failed connection attempt, and
	// in rate mode a request given up because its connection could not be
	// opened in time.
	classConnect
	classUnsent
)

// outcome is one iteration's result.
type outcome struct {
	class   class
	conn    connectKind   // classConnect: the cause
	status  int           // HTTP status; 0 without a response
	latency time.Duration // send to complete response; recorded only with a response
	// Rate mode only (zero in closed loop):
	corrected time.Duration // intended send time to complete response
	delay     time.Duration // intended to actual send time (or to giving up)
}

// lateThreshold is schema.LateThresholdMS.
const lateThreshold = schema.LateThresholdMS * time.Millisecond

// classify judges a response; rotated is the refresh token it carried.
func classify(resp Response, latency time.Duration, sc scenario) (o outcome, rotated string) {
	o = outcome{status: resp.Status, latency: latency}
	switch {
	case resp.Err != nil:
		o.class, o.conn = transportClass(resp.Err)
	case resp.Status < 200 || resp.Status > 299:
		o.class = classNon2xx
	default:
		var ok bool
		if ok, rotated = sc.check(resp.Body); !ok {
			o.class = classCheck
		}
	}
	return o, rotated
}

// transportClass is the class of a transport failure: a failed connection
// attempt (with its cause), a timeout or a socket error.
func transportClass(err error) (class, connectKind) {
	if k := connectFailure(err); k != connectNone {
		return classConnect, k
	}
	if isTimeout(err) {
		return classTimeout, connectNone
	}
	return classSocket, connectNone
}

// counts are an interval's figures other than latency.
type counts struct {
	requests int64
	ok       int64
	errors   schema.Errors
	codes    map[int]int64
	late     int64         // rate mode: sent more than lateThreshold behind schedule
	lateMax  time.Duration // rate mode: the largest delay
	connect  schema.ConnectErrors
}

// empty: nothing recorded since the last reset.
func (c *counts) empty() bool {
	return c.requests == 0 && c.connect == schema.ConnectErrors{}
}

func (c *counts) record(o outcome) {
	switch o.class {
	case classConnect:
		addConnect(&c.connect, o.conn)
		return
	case classUnsent:
		c.connect.Unsent++
		return
	}
	c.requests++
	if o.delay > lateThreshold {
		c.late++
	}
	c.lateMax = max(c.lateMax, o.delay)
	if o.status != 0 {
		c.codes[o.status]++
	}
	if o.class == classOK {
		c.ok++
		return
	}
	addFailed(&c.errors, o.class, 1)
}

// addFailed adds n failed requests of class c to the step's error classes.
func addFailed(e *schema.Errors, c class, n int64) {
	switch c {
	case classNon2xx:
		e.Non2xx += n
	case classSocket:
		e.Socket += n
	case classTimeout:
		e.Timeout += n
	case classCheck:
		e.Check += n
	case classExhausted:
		e.PoolExhausted += n
	}
}

func (c *counts) add(o *counts) {
	c.requests += o.requests
	c.ok += o.ok
	c.errors = c.errors.Add(o.errors)
	c.late += o.late
	c.lateMax = max(c.lateMax, o.lateMax)
	c.connect = c.connect.Add(o.connect)
	for k, v := range o.codes {
		c.codes[k] += v
	}
}

func (c *counts) reset() {
	c.requests, c.ok, c.errors, c.late, c.lateMax, c.connect = 0, 0, schema.Errors{}, 0, 0, schema.ConnectErrors{}
	clear(c.codes)
}

// tally is one interval, merged from the workers (or the whole window).
type tally struct {
	counts
	// hist holds the latency of every request that got a complete HTTP
	// response (ok, non2xx, check); socket errors, timeouts and pool
	// exhaustion have no service time and are only counted.
	hist *hdrhistogram.Histogram
	// corrected holds, in rate mode, the same requests' latency from their
	// intended send time; nil in closed loop.
	corrected *hdrhistogram.Histogram
}

func newTally(rate bool) *tally {
	t := &tally{counts: counts{codes: map[int]int64{}}, hist: schema.NewHistogram()}
	if rate {
		t.corrected = schema.NewHistogram()
	}
	return t
}

func (t *tally) add(o *tally) {
	t.counts.add(&o.counts)
	t.hist.Merge(o.hist)
	if t.corrected != nil && o.corrected != nil {
		t.corrected.Merge(o.corrected)
	}
}

// tallies collects the workers' intervals. Workers hand over once per
// interval they sent in, so recording itself takes no lock.
type tallies struct {
	rate bool // tallies carry a corrected histogram
	mu   sync.Mutex
	per  []*tally // by interval index
}

// merge adds a worker's interval idx and empties c, lat and corr (nil in
// closed loop).
func (ts *tallies) merge(idx int, c *counts, lat, corr *latencyBuf) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.at(idx)
	t.counts.add(c)
	c.reset()
	ts.drain(t, lat, corr)
}

// mergeLatency hands over a worker's full latency buffers for interval idx.
func (ts *tallies) mergeLatency(idx int, lat, corr *latencyBuf) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.drain(ts.at(idx), lat, corr)
}

// at is interval idx's tally, created when first needed; ts.mu is held.
func (ts *tallies) at(idx int) *tally {
	for len(ts.per) <= idx {
		ts.per = append(ts.per, nil)
	}
	if ts.per[idx] == nil {
		ts.per[idx] = newTally(ts.rate)
	}
	return ts.per[idx]
}

func (ts *tallies) drain(t *tally, lat, corr *latencyBuf) {
	lat.drain(t.hist)
	if corr != nil {
		corr.drain(t.corrected)
	}
}

// recorder is one worker's: it holds the interval the worker is sending in
// and hands it over when the worker moves to the next one. A worker's
// attribution times (send times in closed loop, intended send times in rate
// mode) never go backwards, so each interval is handed over once.
type recorder struct {
	into *tallies
	idx  int
	cur  counts
	lat  latencyBuf
	corr *latencyBuf // rate mode; nil in closed loop
	live *liveCount
}

func newRecorder(into *tallies, live *liveCount) *recorder {
	r := &recorder{into: into, idx: -1, cur: counts{codes: map[int]int64{}}, live: live}
	if into.rate {
		r.corr = &latencyBuf{}
	}
	return r
}

func (r *recorder) record(idx int, o outcome) {
	if idx != r.idx {
		r.flush()
		r.idx = idx
	}
	r.cur.record(o)
	if o.status == 0 {
		return
	}
	if r.corr != nil {
		r.corr.record(o.corrected.Nanoseconds()) // fills with lat: same requests
	}
	if r.lat.record(o.latency.Nanoseconds()) {
		r.into.mergeLatency(r.idx, &r.lat, r.corr)
	}
}

func (r *recorder) flush() {
	if r.idx >= 0 && !r.cur.empty() {
		r.into.merge(r.idx, &r.cur, &r.lat, r.corr)
	}
}

// liveCount is a worker's running count for the progress line and the
// live metrics (completed requests, and the failed ones by class), and the
// send time of its last counted request, written by the worker only. A
// failure costs one atomic add, as a single failed count would. Padding
// keeps workers off each other's cache lines.
type liveCount struct {
	sent     atomic.Int64
	failed   [classExhausted + 1]atomic.Int64 // by class; classOK unused
	lastSend time.Time                        // read only after the worker has finished
	// Rate mode, read only after the worker has finished: its responses
	// complete within the window (whatever their intended time), and its
	// requests due before the window's end that were not complete by then.
	completed, backlog int64
	// Rate mode: the corrected latency of its answered requests summed
	// (ns), the sum of their logarithms (ln ns, in thousandths), and how
	// many: the live view's mean and the adaptive warmup's geometric mean
	// of each interval.
	correctedNS, correctedLog, answered atomic.Int64
	_                                   [128 - 8 - 8*(classExhausted+1) - 24 - 16 - 24]byte
}

// finished counts, in rate mode, a request due at due that ended at done
// with outcome o: its corrected latency when answered, and against the
// window [start, end) completed within it or left over at its end.
func (l *liveCount) finished(start, end, due, done time.Time, o outcome) {
	if o.status != 0 {
		l.correctedNS.Add(int64(o.corrected))
		l.correctedLog.Add(int64(math.Round(1000 * math.Log(float64(max(o.corrected, time.Microsecond))))))
		l.answered.Add(1)
	}
	if !due.Before(end) {
		return
	}
	if done.After(end) {
		l.backlog++
		return
	}
	if o.status != 0 && !done.Before(start) {
		l.completed++
	}
}

func (l *liveCount) count(o outcome) {
	if o.class == classConnect || o.class == classUnsent {
		return
	}
	l.sent.Add(1)
	if o.class != classOK {
		l.failed[o.class].Add(1)
	}
}

// liveSum is the workers' running counts summed: requests completed and
// those that failed, by class (classOK unused).
type liveSum struct {
	sent   int64
	failed [classExhausted + 1]int64
}

// failedAll is every failed request.
func (s liveSum) failedAll() int64 {
	var n int64
	for _, f := range s.failed {
		n += f
	}
	return n
}

// errors is the failed requests as the step's error classes.
func (s liveSum) errors() schema.Errors {
	var e schema.Errors
	for c, n := range s.failed {
		addFailed(&e, class(c), n)
	}
	return e
}
