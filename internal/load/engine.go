package load

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// plan is a step's timeline, on the monotonic clock.
type plan struct {
	launch   time.Time     // workers start (warmup begins)
	start    time.Time     // measured window begins
	end      time.Time     // measured window ends: no request starts at or after it
	interval time.Duration // length of one interval
}

// index is the interval a request sent at t belongs to (t in [start, end)).
func (p plan) index(t time.Time) int { return int(t.Sub(p.start) / p.interval) }

// window is what the measured window turned out to be.
type window struct {
	start, end  time.Time
	interrupted bool // ctx was cancelled before the planned end
	cpu         cpuUse
}

// engine runs one closed-loop step.
type engine struct {
	cfg        *Config
	sc         scenario
	creds      *credPool
	assertions *credPool
	newSender  NewSenderFunc
	engineName string // recorded in the step's driver
	tallies    tallies
	live       []liveCount // per worker
	plan       plan
	base       [2]atomic.Int64 // live sent/failed at the start of the window, for progress
	stopped    atomic.Bool     // ctx was cancelled: no request starts
}

// Run runs one step: a pre-flight dial, the warmup, the measured window,
// the drain. Cancelling ctx stops new requests, drains those in flight and
// returns a step with status interrupted. The error is a runtime failure
// (an unreachable target); failed requests are data in the step.
func Run(ctx context.Context, cfg *Config) (*schema.Step, error) {
	if err := preflight(ctx, cfg.URL, cfg.Timeout); err != nil {
		return nil, err
	}
	e := &engine{
		cfg:        cfg,
		sc:         newScenario(cfg),
		creds:      newCredPool(cfg.Pool, cfg.PoolMode),
		assertions: newCredPool(cfg.AssertionPool, PoolReuse),
		live:       make([]liveCount, cfg.Connections),
	}
	e.newSender, e.engineName = cfg.sender()
	return e.step(e.run(ctx))
}

// preflight dials the target once so that an unreachable target is an
// error, not a step full of socket errors.
func preflight(ctx context.Context, u *url.URL, timeout time.Duration) error {
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	d := net.Dialer{Timeout: min(timeout, 10*time.Second)}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", host, err)
	}
	return conn.Close()
}

// run starts the workers, watches the clock and waits for the drain.
func (e *engine) run(ctx context.Context) window {
	now := time.Now()
	start := now.Add(e.cfg.Warmup)
	e.plan = plan{launch: now, start: start, end: start.Add(e.cfg.Duration), interval: e.cfg.Interval}
	// Workers poll a flag, not ctx.Err(), which takes a lock per call.
	e.stopped.Store(ctx.Err() != nil)
	stopWatch := context.AfterFunc(ctx, func() { e.stopped.Store(true) })
	defer stopWatch()
	var wg sync.WaitGroup
	for i := range e.cfg.Connections {
		wg.Go(func() { e.worker(ctx, i) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	stopProgress := e.startProgress()
	w := e.watch(ctx, done)
	<-done
	stopProgress()
	if w.end.Before(e.plan.end) {
		e.cover(&w)
	}
	return w
}

// watch sleeps through the warmup and the window, sampling CPU at both
// edges. It returns early when ctx is cancelled (interrupted) or when every
// worker has stopped (all ran out of pool): the window ends there.
func (e *engine) watch(ctx context.Context, done <-chan struct{}) window {
	if !sleepUntil(ctx, done, e.plan.start) {
		if now := time.Now(); now.Before(e.plan.start) {
			return window{start: now, end: now, interrupted: ctx.Err() != nil}
		}
	}
	t := e.liveTotals()
	e.base[0].Store(t[0])
	e.base[1].Store(t[1])
	w := window{start: e.plan.start, end: e.plan.end}
	before := sampleCPU()
	if !sleepUntil(ctx, done, e.plan.end) {
		if now := time.Now(); now.Before(e.plan.end) {
			w.end, w.interrupted = now, ctx.Err() != nil
		}
	}
	w.cpu = sampleCPU().since(before)
	return w
}

// cover stretches a window that ended early over every counted send: a
// worker that checked ctx just before the cancel may have sent after the
// watcher saw it, and a worker that ran dry in the warmup records its
// exhaustion at the window start.
func (e *engine) cover(w *window) {
	for i := range e.live {
		t := e.live[i].lastSend
		if t.IsZero() {
			continue
		}
		w.start = e.plan.start
		if !t.Before(w.end) {
			w.end = t.Add(time.Nanosecond)
		}
	}
}

// sleepUntil waits for t; false when ctx was cancelled or done closed first.
func sleepUntil(ctx context.Context, done <-chan struct{}, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	case <-done:
		return false
	}
}

// worker is one connection's request loop. A request is attributed to the
// moment the worker decided to send it: warmup requests are never counted,
// and a request started before the end of the window is awaited and counted.
// In-flight requests outlive a cancel: they drain, bounded by the timeout
// (the Sender's deadline). The loop allocates nothing per request.
func (e *engine) worker(ctx context.Context, i int) {
	snd := e.newSender(i)
	defer snd.Close()
	src := e.creds.source(i, e.cfg.Connections)
	asrc := e.assertions.source(i, e.cfg.Connections)
	rec := newRecorder(&e.tallies, &e.live[i])
	defer rec.flush()
	req := &Request{URL: e.cfg.URL}
	for !e.stopped.Load() {
		now := time.Now()
		if !now.Before(e.plan.end) {
			return
		}
		cred, ok := src.next()
		if !ok {
			e.exhausted(ctx, i, rec)
			return
		}
		assertion, _ := asrc.next()
		e.sc.build(req, cred, assertion)
		resp := snd.Send(req, now.Add(e.cfg.Timeout))
		o, rotated := classify(resp, time.Since(now), e.sc)
		if o.class == classOK {
			src.rotate(rotated)
		}
		e.live[i].count(o)
		if !now.Before(e.plan.start) {
			rec.record(e.plan.index(now), o)
			e.live[i].lastSend = now
		}
	}
}

// exhausted records that worker i found its consume pool empty. A worker
// that ran dry during the warmup is missing from the whole window, so its
// exhaustion is recorded at the window's start.
func (e *engine) exhausted(ctx context.Context, i int, rec *recorder) {
	now := time.Now()
	if now.Before(e.plan.start) {
		if !sleepUntil(ctx, nil, e.plan.start) {
			return
		}
		now = e.plan.start
	}
	if !now.Before(e.plan.end) {
		return
	}
	o := outcome{class: classExhausted}
	e.live[i].count(o)
	rec.record(e.plan.index(now), o)
	e.live[i].lastSend = now
}
