package load

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// plan is a step's timeline, on the monotonic clock. The window's edges
// are offsets from launch, held in atomics: an adaptive warmup decides
// them while the workers run (see settle), and every reader goes through
// start, end and slot.
type plan struct {
	launch   time.Time     // workers start (warmup begins)
	startAt  atomic.Int64  // measured window begins, ns after launch
	endAt    atomic.Int64  // measured window ends, ns after launch: no request due at or after it starts
	interval time.Duration // length of one interval
	rate     float64       // requests/s of the whole step's schedule (all agents); 0 = closed loop
	ramp     time.Duration // rate mode: the schedule climbs from 0 to rate over this first part of the warmup
	seg      Segment       // which slots of the schedule are this agent's
}

// start is when the measured window begins.
func (p *plan) start() time.Time { return p.launch.Add(time.Duration(p.startAt.Load())) }

// end is when the measured window ends.
func (p *plan) end() time.Time { return p.launch.Add(time.Duration(p.endAt.Load())) }

// setWindow makes the window begin at start after launch and last duration.
func (p *plan) setWindow(start, duration time.Duration) {
	p.startAt.Store(int64(start))
	p.endAt.Store(int64(start + duration))
}

// slot is the interval a request due at t belongs to, or false when it
// was due in the warmup. It reads the start once.
func (p *plan) slot(t time.Time) (int, bool) {
	d := t.Sub(p.launch) - time.Duration(p.startAt.Load())
	if d < 0 {
		return 0, false
	}
	return int(d / p.interval), true
}

// intended is the intended send time of this agent's request k in rate
// mode. The whole step is one evenly spaced schedule, slot n due at
// launch + n/rate from the start of the warmup. An agent of a segmented
// step (of N) sends the slots k*N + I of it, so the N agents' schedules
// together are that one schedule exactly, and alone the whole step sends
// every slot (k = n). Connection i of the agent's c sends its requests i,
// i+c, i+2c, ... — its own share, offset from its neighbours. The times
// are computed from the slot, never accumulated, so they cannot drift.
//
// With a ramp of T the schedule's rate climbs linearly from 0 to rate over
// T (slot n due sqrt(2Tn/rate) after launch), then holds: slot n due at
// n/rate + T/2, evenly spaced as without a ramp, half the ramp later. The
// connections then open, and the product meets the rate, gradually, not
// all in the first few milliseconds with a queue to drain after.
func (p *plan) intended(k int64) time.Time {
	n := float64(k*int64(p.seg.agents()) + int64(p.seg.Index))
	if p.ramp > 0 {
		if t := p.ramp.Seconds(); n < p.rate*t/2 {
			return p.launch.Add(time.Duration(math.Sqrt(2*t*n/p.rate) * float64(time.Second)))
		}
	}
	return p.launch.Add(p.ramp/2 + time.Duration(n*float64(time.Second)/p.rate))
}

// window is what the measured window turned out to be.
type window struct {
	start, end  time.Time
	interrupted bool // ctx was cancelled before the planned end
	cpu         cpuUse
}

// engine runs one closed-loop step.
type engine struct {
	cfg        *Config
	conns      int // this agent's connections (its segment's share)
	sc         scenario
	creds      *credPool
	assertions *credPool
	newSender  NewSenderFunc
	flows      *flows   // iteration scenarios only; nil otherwise
	loops      []func() // EngineEpoll's event loops (epoll_linux.go); nil for the goroutine engines
	engineName string   // recorded in the step's driver
	tallies    tallies
	live       []liveCount // per worker
	plan       plan
	warm       settler       // an adaptive warmup's record (warmup.go)
	jit        *jitWatch     // the product's JIT compilers (jit.go); nil when not watched
	decided    chan struct{} // closed once the window's start is final
	stopped    atomic.Bool   // ctx was cancelled: no request starts
	reach      reach         // whether the target accepts connections
	started    time.Time     // when the workers actually began (the launch, or later with StartAt)

	// base is the live counts at the start of the window (the progress
	// line, the live view); nil before it.
	base atomic.Pointer[liveSum]
}

// Run runs one step: a pre-flight dial, the warmup, the measured window,
// the drain. Cancelling ctx stops new requests, drains those in flight and
// returns a step with status interrupted. The error is a runtime failure
// (an unreachable target); failed requests are data in the step.
func Run(ctx context.Context, cfg *Config) (*schema.Step, error) {
	conns := cfg.agentConnections()
	if err := RaiseFileLimit(conns); err != nil {
		return nil, err
	}
	if err := preflight(ctx, cfg.URL, cfg.Timeout); err != nil {
		return nil, err
	}
	e := &engine{
		cfg:        cfg,
		conns:      conns,
		creds:      newCredPool(cfg.Segment.Pool(cfg.Pool), cfg.PoolMode),
		assertions: newCredPool(cfg.Segment.Pool(cfg.AssertionPool), PoolReuse),
		live:       make([]liveCount, conns),
	}
	e.tallies.rate = cfg.Rate > 0
	if schema.IterationScenario(cfg.Scenario) {
		e.flows, e.engineName = newFlows(cfg), EngineNetHTTP
	} else {
		e.sc = newScenario(cfg)
		e.newSender, e.engineName = cfg.sender()
	}
	if e.engineName == EngineEpoll {
		var err error
		if e.loops, err = e.epollLoops(); err != nil {
			return nil, err
		}
	}
	launch, started, err := cfg.launchTime(ctx)
	if err != nil {
		return nil, err
	}
	e.started = started
	e.jit = newJITWatch(cfg.JITPidfile, launch)
	return e.step(e.run(ctx, launch))
}

// preflightTimeout bounds the dial that checks the target before a step:
// the request timeout, but at least 2 s (a loopback connect on a starved
// machine can take longer than a short request timeout, and a target that
// accepts is not unreachable) and at most 10 s.
func preflightTimeout(timeout time.Duration) time.Duration {
	return min(max(timeout, 2*time.Second), 10*time.Second)
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
	d := net.Dialer{Timeout: preflightTimeout(timeout)}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", host, err)
	}
	return conn.Close()
}

// run starts the workers at launch (now, or the common start a little
// before now), watches the clock and waits for the drain.
func (e *engine) run(ctx context.Context, launch time.Time) window {
	e.reach.launch = launch
	e.plan.launch, e.plan.interval, e.plan.rate, e.plan.ramp, e.plan.seg = launch, e.cfg.Interval, e.cfg.Rate, e.cfg.RampUp, e.cfg.Segment
	e.decided = make(chan struct{})
	if e.cfg.WarmupMax > 0 {
		e.plan.setWindow(e.cfg.WarmupMax, e.cfg.Duration) // until settle decides
	} else {
		e.plan.setWindow(e.cfg.Warmup, e.cfg.Duration)
		close(e.decided)
	}
	// Workers poll a flag, not ctx.Err(), which takes a lock per call.
	e.stopped.Store(ctx.Err() != nil)
	stopWatch := context.AfterFunc(ctx, func() { e.stopped.Store(true) })
	defer stopWatch()
	var wg sync.WaitGroup
	if e.loops != nil {
		for _, loop := range e.loops {
			wg.Go(loop)
		}
	} else {
		for i := range e.conns {
			wg.Go(func() { e.worker(ctx, i) })
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	stopProgress := e.startProgress()
	stopLive := e.startLive()
	w := e.watch(ctx, done)
	<-done
	stopProgress()
	stopLive()
	if e.cfg.Window != nil {
		e.cfg.Window.StepDrained(context.WithoutCancel(ctx))
	}
	if w.end.Before(e.plan.end()) {
		e.cover(&w)
	}
	return w
}

// watch sleeps through the warmup (deciding its end, when it is adaptive)
// and the window, sampling CPU at both edges. It returns early when ctx is
// cancelled (interrupted) or when every worker has stopped (all ran out of
// pool): the window ends there.
func (e *engine) watch(ctx context.Context, done <-chan struct{}) window {
	if !e.warmup(ctx, done) {
		if now := time.Now(); now.Before(e.plan.start()) {
			return window{start: now, end: now, interrupted: ctx.Err() != nil}
		}
	}
	start := e.plan.start()
	if e.cfg.Window != nil {
		e.cfg.Window.WindowStart(start)
	}
	e.base.Store(new(e.liveTotals()))
	w := window{start: start, end: e.plan.end()}
	before := sampleCPU()
	if e.jit != nil {
		e.jit.windowStart(time.Now())
	}
	if !sleepUntil(ctx, done, w.end) {
		if now := time.Now(); now.Before(w.end) {
			w.end, w.interrupted = now, ctx.Err() != nil
		}
	}
	w.cpu = sampleCPU().since(before)
	if e.jit != nil {
		e.jit.windowEnd(time.Now(), w.start)
	}
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
		w.start = e.plan.start()
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

// conn is what one worker sends with.
type conn struct {
	snd         Sender      // single-request scenarios
	fw          *flowWorker // iteration scenarios
	src, asrc   source
	rec         *recorder
	req         *Request
	backoff     backoff   // between failed connection attempts
	failing     bool      // the last attempt failed to connect
	nextAttempt time.Time // failing: no attempt before this
}

// worker is connection i's request loop, closed or paced (rate mode). A
// request is attributed to the moment it was due: in closed loop when the
// worker decided to send it, in rate mode its intended send time. Warmup
// requests are never counted, and a request due before the end of the
// window is awaited and counted. In-flight requests outlive a cancel: they
// drain, bounded by the timeout (the Sender's deadline). The loops allocate
// nothing per request.
func (e *engine) worker(ctx context.Context, i int) {
	c := &conn{
		src:     e.creds.source(i, e.conns),
		asrc:    e.assertions.source(i, e.conns),
		rec:     newRecorder(&e.tallies, &e.live[i]),
		req:     &Request{URL: e.cfg.URL},
		backoff: backoff{max: e.cfg.Interval},
	}
	if e.flows != nil {
		c.fw = e.flows.newWorker()
		defer c.fw.close()
	} else {
		c.snd = e.newSender(i)
		defer c.snd.Close()
	}
	defer c.rec.flush()
	if e.plan.rate > 0 {
		e.paced(ctx, i, c)
		return
	}
	for !e.stopped.Load() {
		now := time.Now()
		if !now.Before(e.plan.end()) || !e.iterate(ctx, i, c, now, now) {
			return
		}
	}
}

// paced is connection i's loop in rate mode (the wrk2 model). It sleeps
// until each request's intended time; a connection that has fallen behind
// (its previous response came late) sends back to back until it has caught
// up, and the intended times never move, so the wait shows in the
// corrected latency instead of thinning the load. A request whose intended
// time plus the timeout has passed before the connection is free is not
// sent: it counts as a timeout. Requests due before the end of the window
// are all sent, after its end if need be (the drain, bounded the same way).
func (e *engine) paced(ctx context.Context, i int, c *conn) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for n := int64(i); ; n += int64(e.conns) {
		due := e.plan.intended(n)
		if end := e.plan.end(); !due.Before(end) {
			// Done with the schedule: stay until the window ends, which
			// the watcher would otherwise take for a worker out of pool.
			e.waitUntil(ctx, timer, end)
			return
		}
		if !e.waitUntil(ctx, timer, due) {
			return
		}
		now := time.Now()
		if c.failing && !due.Add(e.cfg.Timeout).After(c.nextAttempt) {
			// Its connection cannot try again before the request's time is up.
			e.count(i, c.rec, due, outcome{class: classUnsent, delay: now.Sub(due)})
			continue
		}
		if !now.Before(due.Add(e.cfg.Timeout)) {
			// Never sent: its connection was busy with a slow response.
			e.count(i, c.rec, due, outcome{class: classTimeout, delay: now.Sub(due)})
			continue
		}
		if c.failing && now.Before(c.nextAttempt) {
			if !e.waitUntil(ctx, timer, c.nextAttempt) {
				return
			}
			now = time.Now()
		}
		if !e.iterate(ctx, i, c, due, now) {
			return
		}
	}
}

// waitUntil sleeps until t on timer; false when the step was stopped.
func (e *engine) waitUntil(ctx context.Context, timer *time.Timer, t time.Time) bool {
	if e.stopped.Load() {
		return false
	}
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer.Reset(d)
	select {
	case <-timer.C:
		return !e.stopped.Load()
	case <-ctx.Done():
		timer.Stop()
		return false
	}
}

// iterate sends one request, due at due and sent at now, and records it;
// false when a consume pool has run dry. A failed connection attempt is
// recorded as such, and the same request is sent again after the
// connection's backoff (see retry).
func (e *engine) iterate(ctx context.Context, i int, c *conn, due, now time.Time) bool {
	if c.fw != nil {
		e.iterateFlow(ctx, i, c, due, now)
		return true
	}
	cred, ok := c.src.next()
	if !ok {
		e.exhausted(ctx, i, c.rec, due)
		return false
	}
	assertion, _ := c.asrc.next()
	e.sc.build(c.req, cred, assertion)
	for {
		resp := c.snd.Send(c.req, due.Add(e.cfg.Timeout))
		done := time.Now()
		o, rotated := classify(resp, done.Sub(now), e.sc)
		if o.class == classOK {
			c.src.rotate(rotated)
		}
		o.corrected, o.delay = done.Sub(due), now.Sub(due)
		if !e.record(i, c, due, done, o) {
			return true
		}
		if due, now, ok = e.retry(ctx, i, c, due); !ok {
			return true
		}
	}
}

// iterateFlow runs one iteration of an iteration scenario, due at due and
// started at now, and records it like a single request: its latency runs
// from the send of its first request to the end of its last response. Its
// named requests are recorded when it belongs to the window. An iteration
// whose first request could not connect sent nothing: it is a failed
// connection attempt, and a new iteration starts after the backoff.
func (e *engine) iterateFlow(ctx context.Context, i int, c *conn, due, now time.Time) {
	for {
		_, counted := e.plan.slot(due)
		o := c.fw.run(counted)
		done := time.Now()
		o.latency, o.corrected, o.delay = done.Sub(now), done.Sub(due), now.Sub(due)
		if !e.record(i, c, due, done, o) {
			return
		}
		var ok bool
		if due, now, ok = e.retry(ctx, i, c, due); !ok {
			return
		}
	}
}

// record counts outcome o of worker i's request due at due and completed
// at done, and notes what it says of the target's reachability; true when
// it was a failed connection attempt, to be retried.
func (e *engine) record(i int, c *conn, due, done time.Time, o outcome) (failed bool) {
	e.count(i, c.rec, due, o)
	if e.plan.rate > 0 && o.class != classConnect {
		e.live[i].finished(e.plan.start(), e.plan.end(), due, done, o)
	}
	if o.class == classConnect {
		e.reach.failed(done)
		c.failing = true
		return true
	}
	if o.status != 0 {
		e.reach.answered(done)
		c.backoff.reset()
	}
	c.failing = false
	return false
}

// retry waits out the connection's backoff after a failed connection
// attempt of its request due at due. It returns the new attempt's due and
// send times, or false when the request is given up: the step stopped, the
// window ended (closed loop), or in rate mode the backoff outlasts the
// request's intended time plus the timeout, and it is counted as unsent.
func (e *engine) retry(ctx context.Context, i int, c *conn, due time.Time) (time.Time, time.Time, bool) {
	c.nextAttempt = time.Now().Add(c.backoff.wait())
	if e.plan.rate > 0 && !c.nextAttempt.Before(due.Add(e.cfg.Timeout)) {
		e.count(i, c.rec, due, outcome{class: classUnsent, delay: time.Since(due)})
		return due, due, false
	}
	until := c.nextAttempt
	if end := e.plan.end(); e.plan.rate == 0 && until.After(end) {
		until = end
	}
	if !sleepUntil(ctx, nil, until) || e.stopped.Load() {
		return due, due, false
	}
	now := time.Now()
	switch {
	case e.plan.rate > 0:
		return due, now, true
	case now.Before(e.plan.end()):
		return now, now, true // closed loop: the request is decided on anew
	}
	return due, now, false
}

// count records outcome o of worker i, due at t: in the window it is
// attributed to t's interval.
func (e *engine) count(i int, rec *recorder, t time.Time, o outcome) {
	e.live[i].count(o)
	if k, ok := e.plan.slot(t); ok {
		rec.record(k, o)
		if o.class != classConnect && o.class != classUnsent {
			e.live[i].lastSend = t
		}
	}
}

// exhausted records that worker i found its consume pool empty at t. A
// worker that ran dry during the warmup is missing from the whole window,
// so its exhaustion is recorded at the window's start.
func (e *engine) exhausted(ctx context.Context, i int, rec *recorder, t time.Time) {
	if _, ok := e.plan.slot(t); !ok {
		if !e.untilStart(ctx) {
			return
		}
		t = e.plan.start()
	}
	if !t.Before(e.plan.end()) {
		return
	}
	e.count(i, rec, t, outcome{class: classExhausted})
}
