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

// tally counts one interval (of one worker, or merged).
type tally struct {
	requests int64
	ok       int64
	errors   schema.Errors
	codes    map[int]int64
	// hist holds the latency of every request that got a complete HTTP
	// response (ok, non2xx, check); socket errors, timeouts and pool
	// exhaustion have no service time and are only counted.
	hist *hdrhistogram.Histogram
}

func newTally() *tally {
	return &tally{codes: map[int]int64{}, hist: schema.NewHistogram()}
}

func (t *tally) record(o outcome) {
	t.requests++
	if o.status != 0 {
		t.codes[o.status]++
		// Values beyond the geometry (60 s) are clamped rather than lost.
		t.hist.RecordValue(min(max(o.latency.Nanoseconds(), 1), int64(schema.HistHighestNS)))
	}
	switch o.class {
	case classOK:
		t.ok++
	case classNon2xx:
		t.errors.Non2xx++
	case classSocket:
		t.errors.Socket++
	case classTimeout:
		t.errors.Timeout++
	case classCheck:
		t.errors.Check++
	case classExhausted:
		t.errors.PoolExhausted++
	}
}

func (t *tally) add(o *tally) {
	t.requests += o.requests
	t.ok += o.ok
	t.errors = t.errors.Add(o.errors)
	for k, v := range o.codes {
		t.codes[k] += v
	}
	t.hist.Merge(o.hist)
}

func (t *tally) reset() {
	t.requests, t.ok, t.errors = 0, 0, schema.Errors{}
	clear(t.codes)
	t.hist.Reset()
}

// tallies collects the workers' interval tallies. Workers merge into it once
// per interval they sent in, so recording itself takes no lock.
type tallies struct {
	mu  sync.Mutex
	per []*tally // by interval index
}

func (ts *tallies) merge(idx int, t *tally) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for len(ts.per) <= idx {
		ts.per = append(ts.per, nil)
	}
	if ts.per[idx] == nil {
		ts.per[idx] = newTally()
	}
	ts.per[idx].add(t)
}

// recorder is one worker's: it holds the tally of the interval the worker
// is sending in and hands it over when the worker moves to the next one.
// A closed-loop worker's send times never go backwards, so each interval is
// handed over once.
type recorder struct {
	into *tallies
	idx  int
	cur  *tally
	live *liveCount
}

func newRecorder(into *tallies, live *liveCount) *recorder {
	return &recorder{into: into, idx: -1, cur: newTally(), live: live}
}

func (r *recorder) record(idx int, o outcome) {
	if idx != r.idx {
		r.flush()
		r.idx = idx
	}
	r.cur.record(o)
}

func (r *recorder) flush() {
	if r.idx >= 0 && r.cur.requests > 0 {
		r.into.merge(r.idx, r.cur)
		r.cur.reset()
	}
}

// liveCount is a worker's running count for the progress line, written by
// the worker only. Padding keeps workers off each other's cache lines.
type liveCount struct {
	sent, failed atomic.Int64
	_            [48]byte
}

func (l *liveCount) count(o outcome) {
	l.sent.Add(1)
	if o.class != classOK {
		l.failed.Add(1)
	}
}
