package load

import (
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
)

// outcome is one iteration's result.
type outcome struct {
	class   class
	status  int           // HTTP status; 0 without a response
	latency time.Duration // send to complete response; recorded only with a response
}

// classify judges a response; rotated is the refresh token it carried.
func classify(resp Response, latency time.Duration, sc scenario) (o outcome, rotated string) {
	o = outcome{status: resp.Status, latency: latency}
	switch {
	case resp.Err != nil && isTimeout(resp.Err):
		o.class = classTimeout
	case resp.Err != nil:
		o.class = classSocket
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

// counts are an interval's figures other than latency.
type counts struct {
	requests int64
	ok       int64
	errors   schema.Errors
	codes    map[int]int64
}

func (c *counts) record(o outcome) {
	c.requests++
	if o.status != 0 {
		c.codes[o.status]++
	}
	switch o.class {
	case classOK:
		c.ok++
	case classNon2xx:
		c.errors.Non2xx++
	case classSocket:
		c.errors.Socket++
	case classTimeout:
		c.errors.Timeout++
	case classCheck:
		c.errors.Check++
	case classExhausted:
		c.errors.PoolExhausted++
	}
}

func (c *counts) add(o *counts) {
	c.requests += o.requests
	c.ok += o.ok
	c.errors = c.errors.Add(o.errors)
	for k, v := range o.codes {
		c.codes[k] += v
	}
}

func (c *counts) reset() {
	c.requests, c.ok, c.errors = 0, 0, schema.Errors{}
	clear(c.codes)
}

// tally is one interval, merged from the workers (or the whole window).
type tally struct {
	counts
	// hist holds the latency of every request that got a complete HTTP
	// response (ok, non2xx, check); socket errors, timeouts and pool
	// exhaustion have no service time and are only counted.
	hist *hdrhistogram.Histogram
}

func newTally() *tally {
	return &tally{counts: counts{codes: map[int]int64{}}, hist: schema.NewHistogram()}
}

func (t *tally) add(o *tally) {
	t.counts.add(&o.counts)
	t.hist.Merge(o.hist)
}

// tallies collects the workers' intervals. Workers hand over once per
// interval they sent in, so recording itself takes no lock.
type tallies struct {
	mu  sync.Mutex
	per []*tally // by interval index
}

// merge adds a worker's interval idx and empties c and lat.
func (ts *tallies) merge(idx int, c *counts, lat *latencyCounts) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for len(ts.per) <= idx {
		ts.per = append(ts.per, nil)
	}
	if ts.per[idx] == nil {
		ts.per[idx] = newTally()
	}
	ts.per[idx].counts.add(c)
	lat.drain(ts.per[idx].hist)
	c.reset()
}

// recorder is one worker's: it holds the interval the worker is sending in
// and hands it over when the worker moves to the next one. A closed-loop
// worker's send times never go backwards, so each interval is handed over
// once.
type recorder struct {
	into *tallies
	idx  int
	cur  counts
	lat  latencyCounts
	live *liveCount
}

func newRecorder(into *tallies, live *liveCount) *recorder {
	return &recorder{into: into, idx: -1, cur: counts{codes: map[int]int64{}}, lat: newLatencyCounts(), live: live}
}

func (r *recorder) record(idx int, o outcome) {
	if idx != r.idx {
		r.flush()
		r.idx = idx
	}
	r.cur.record(o)
	if o.status != 0 {
		r.lat.record(o.latency.Nanoseconds())
	}
}

func (r *recorder) flush() {
	if r.idx >= 0 && r.cur.requests > 0 {
		r.into.merge(r.idx, &r.cur, &r.lat)
	}
}

// liveCount is a worker's running count for the progress line and the send
// time of its last counted request, written by the worker only. Padding
// keeps workers off each other's cache lines.
type liveCount struct {
	sent, failed atomic.Int64
	lastSend     time.Time // read only after the worker has finished
	_            [128 - 16 - 24]byte
}

func (l *liveCount) count(o outcome) {
	l.sent.Add(1)
	if o.class != classOK {
		l.failed.Add(1)
	}
}
