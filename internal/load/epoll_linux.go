package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// epollAvailable: EngineEpoll runs on this OS.
const epollAvailable = true

// EngineEpoll's event loops. A loop is a goroutine that owns a share of the
// connections: non-blocking sockets in its own epoll instance, which Go's
// netpoller never sees. Per request it makes a write and a read; one
// epoll_wait serves every connection that became ready meanwhile. When
// none is ready the loop parks in Go's netpoller on the epoll instance
// itself (readable when one of its sockets is), so the goroutine engines'
// park and wake per request becomes one per round of ready connections.
// (Blocking in epoll_wait on a locked thread instead measured worse: the
// runtime's monitor keeps waking to take the P from the thread blocked in
// the system call, and the thread switches out on every wait.)
//
// A connection runs the goroutine engine's closed loop as a state machine:
// next decides (stop flag, window end, pool) and builds the request, send
// connects when needed and writes, read scans what arrived (respScan) and
// complete classifies and counts it exactly as iterate does, attributed to
// the moment the request was built, then queues the connection for its
// next request. Connections that close, fail or send bytes nobody asked
// for are reopened for the next request, with raw.go's resend rule. A
// request times out at send + Config.Timeout, connect included.
type epollLoop struct {
	e       *engine
	addr    syscall.Sockaddr
	family  int
	epfd    int             // the epoll instance
	ep      *os.File        // epfd, registered with Go's netpoller
	rc      syscall.RawConn // ep's, to park on
	pollFn  func(fd uintptr) bool
	polled  int           // what pollFn found: events
	pollErr syscall.Errno // and the error
	block   bool          // pollFn may park when nothing is ready
	dl      time.Time     // the deadline set on ep
	conns   []*epollConn
	events  []syscall.EpollEvent
	buf     []byte       // the loop's read buffer, for responses that arrive in one read
	ready   []*epollConn // connections whose next request is due
	active  int          // connections not yet done
	dry     int          // connections waiting for the window to count their empty pool
	scanAt  time.Time    // no request times out before this (zero: none in flight)
	waiting int          // connections in stateBackoff
	retryAt time.Time    // no connection retries before this (zero: none waits)
}

type connState uint8

const (
	stateIdle       connState = iota // between requests (in ready)
	stateConnecting                  // non-blocking connect in progress
	stateWriting                     // request partly written
	stateReading                     // awaiting the response
	stateDry                         // consume pool empty in the warmup: counted at the window start
	stateBackoff                     // its connection attempt failed: waits until retryAt to send again
	stateDone
)

// epollConn is one connection: worker i of the step.
type epollConn struct {
	i         int   // worker index
	key       int32 // index in the loop's conns: the epoll events' key
	fd        int   // -1: none open
	state     connState
	wantOut   bool // registered for EPOLLOUT
	reused    bool // the request went out on a connection that completed an exchange
	src, asrc source
	rec       *recorder
	req       *Request
	line      []byte // the request line
	wbuf      []byte // the request on the wire
	woff      int    // bytes of wbuf written
	in        []byte // bytes of the response, when it spans reads
	scan      respScan
	sent      time.Time // attribution time: when the request was decided on
	deadline  time.Time
	doneAt    time.Time // when it was queued in ready: the next request's time
	backoff   backoff   // between failed connection attempts
	retryAt   time.Time // stateBackoff: when to try again
}

// errTimedOut is a request's deadline passing; a net.Error with Timeout().
var errTimedOut error = os.ErrDeadlineExceeded

// epollLoops splits the step's connections over min(GOMAXPROCS, c) loops
// and returns their run functions.
func (e *engine) epollLoops() ([]func(), error) {
	addr, family, err := resolve(e.cfg)
	if err != nil {
		return nil, err
	}
	loops := make([]*epollLoop, min(runtime.GOMAXPROCS(0), e.conns))
	for k := range loops {
		l, err := newEpollLoop(e, addr, family)
		if err != nil {
			for _, l := range loops[:k] {
				l.ep.Close()
			}
			return nil, fmt.Errorf("epoll engine: %w", err)
		}
		loops[k] = l
	}
	for i := range e.conns {
		l := loops[i%len(loops)]
		c := &epollConn{
			i: i, key: int32(len(l.conns)), fd: -1,
			src:     e.creds.source(i, e.conns),
			asrc:    e.assertions.source(i, e.conns),
			rec:     newRecorder(&e.tallies, &e.live[i]),
			req:     &Request{URL: e.cfg.URL},
			line:    appendRequestLine(nil, e.sc.method, e.cfg.URL),
			backoff: backoff{max: e.cfg.Interval},
		}
		l.conns = append(l.conns, c)
	}
	runs := make([]func(), len(loops))
	for k, l := range loops {
		l.events = make([]syscall.EpollEvent, len(l.conns))
		l.ready = make([]*epollConn, 0, 2*len(l.conns)) // a connection queues at most twice: see startReady
		l.active = len(l.conns)
		runs[k] = l.run
	}
	return runs, nil
}

// newEpollLoop makes a loop's epoll instance, non-blocking so that os
// registers it with the netpoller.
func newEpollLoop(e *engine, addr syscall.Sockaddr, family int) (*epollLoop, error) {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	l := &epollLoop{e: e, addr: ownSockaddr(addr), family: family, epfd: fd, ep: os.NewFile(uintptr(fd), "epoll"), buf: make([]byte, rawReadBuffer)}
	if l.rc, err = l.ep.SyscallConn(); err != nil {
		l.ep.Close()
		return nil, err
	}
	l.pollFn = l.poll
	return l, nil
}

// resolve finds the address the loops connect to: the one Go's dialer
// picks for the target (for a name with several, the first that answers).
func resolve(cfg *Config) (syscall.Sockaddr, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), preflightTimeout(cfg.Timeout))
	defer cancel()
	host := hostPort(cfg.URL)
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, 0, fmt.Errorf("connecting to %s: %w", host, err)
	}
	a := conn.RemoteAddr().(*net.TCPAddr)
	conn.Close()
	if ip4 := a.IP.To4(); ip4 != nil {
		sa := &syscall.SockaddrInet4{Port: a.Port}
		copy(sa.Addr[:], ip4)
		return sa, syscall.AF_INET, nil
	}
	sa := &syscall.SockaddrInet6{Port: a.Port}
	copy(sa.Addr[:], a.IP.To16())
	if a.Zone != "" {
		if ifi, err := net.InterfaceByName(a.Zone); err == nil {
			sa.ZoneId = uint32(ifi.Index)
		}
	}
	return sa, syscall.AF_INET6, nil
}

// ownSockaddr copies sa: syscall.Connect writes into it, so each loop
// needs its own.
func ownSockaddr(sa syscall.Sockaddr) syscall.Sockaddr {
	switch sa := sa.(type) {
	case *syscall.SockaddrInet4:
		c := *sa
		return &c
	case *syscall.SockaddrInet6:
		c := *sa
		return &c
	}
	return sa
}

// run is the loop: start every connection, then wait, handle what is
// ready, time out what is due, until every connection is done.
func (l *epollLoop) run() {
	defer l.ep.Close()
	now := time.Now()
	for _, c := range l.conns {
		c.doneAt = now
		l.ready = append(l.ready, c)
	}
	for {
		l.startReady()
		until, block := l.expire()
		if l.active == 0 {
			return
		}
		n, err := l.wait(until, block)
		if err != nil {
			l.abort(err)
			return
		}
		for _, ev := range l.events[:n] {
			l.event(l.conns[ev.Fd], ev.Events)
		}
	}
}

// wait polls the epoll instance; when nothing is ready and block is set it
// parks in the netpoller until something is or until (zero: no limit).
func (l *epollLoop) wait(until time.Time, block bool) (int, error) {
	l.block, l.polled, l.pollErr = block, 0, 0
	if !block {
		l.poll(uintptr(l.epfd))
		return l.polled, l.pollError()
	}
	if !until.Equal(l.dl) {
		if err := l.ep.SetReadDeadline(until); err != nil {
			return 0, err
		}
		l.dl = until
	}
	if err := l.rc.Read(l.pollFn); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return 0, err
	}
	return l.polled, l.pollError()
}

func (l *epollLoop) pollError() error {
	if l.pollErr != 0 {
		return os.NewSyscallError("epoll_wait", l.pollErr)
	}
	return nil
}

// poll is epoll_wait without a timeout; false (park) when nothing is ready
// and the loop may block.
func (l *epollLoop) poll(fd uintptr) bool {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, fd,
		uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), 0, 0, 0)
	switch {
	case errno == syscall.EINTR:
		return !l.block
	case errno != 0:
		l.pollErr = errno
		return true
	}
	l.polled = int(n)
	return n > 0 || !l.block
}

// startReady starts the next request of the connections queued so far;
// those that fail at once queue again, for the next round, so a refused
// connection cannot starve the others.
func (l *epollLoop) startReady() {
	n := len(l.ready)
	for k := 0; k < n; k++ {
		c := l.ready[k]
		l.next(c, c.doneAt)
	}
	l.ready = append(l.ready[:0], l.ready[n:]...)
}

// next is the closed loop's decision at now, the completion of the
// connection's previous request: stop, count an empty pool, or send.
func (l *epollLoop) next(c *epollConn, now time.Time) {
	e := l.e
	if e.stopped.Load() || !now.Before(e.plan.end()) {
		l.finish(c)
		return
	}
	cred, ok := c.src.next()
	if !ok {
		if _, counted := e.plan.slot(now); !counted {
			l.closeConn(c)
			c.state = stateDry
			l.dry++
			return
		}
		e.count(c.i, c.rec, now, outcome{class: classExhausted})
		l.finish(c)
		return
	}
	assertion, _ := c.asrc.next()
	e.sc.build(c.req, cred, assertion)
	c.wbuf = appendRequest(c.wbuf[:0], c.line, c.req)
	c.sent, c.deadline = now, now.Add(e.cfg.Timeout)
	if l.scanAt.IsZero() || c.deadline.Before(l.scanAt) {
		l.scanAt = c.deadline
	}
	l.send(c)
}

// send writes the request, connecting first when no connection is open.
func (l *epollLoop) send(c *epollConn) {
	c.woff, c.in = 0, c.in[:0]
	c.scan.start(c.req.Method == "HEAD") // forgets a response given up half-way
	c.reused = c.fd >= 0
	if c.fd < 0 {
		if err := l.connect(c); err != nil {
			l.fail(c, err, false)
			return
		}
		if c.state == stateConnecting {
			return
		}
	}
	l.write(c)
}

func (l *epollLoop) connect(c *epollConn) error {
	fd, err := syscall.Socket(l.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	c.fd = fd
	if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
		return os.NewSyscallError("setsockopt", err)
	}
	events := uint32(syscall.EPOLLIN)
	switch err := syscall.Connect(fd, l.addr); err {
	case nil:
		c.state = stateWriting
	case syscall.EINPROGRESS:
		c.state, c.wantOut = stateConnecting, true
		events |= syscall.EPOLLOUT
	default:
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	ev := syscall.EpollEvent{Events: events, Fd: c.key}
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// write writes what is left of the request; a socket that takes only part
// of it is watched for EPOLLOUT until it takes the rest.
func (l *epollLoop) write(c *epollConn) {
	for c.woff < len(c.wbuf) {
		n, err := rawIO(syscall.SYS_WRITE, c.fd, c.wbuf[c.woff:])
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			c.state = stateWriting
			l.watchOut(c, true)
			return
		}
		if err != nil {
			l.fail(c, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", err)}, false)
			return
		}
		c.woff += n
	}
	c.state = stateReading
	l.watchOut(c, false)
}

// watchOut registers (or drops) c's interest in EPOLLOUT.
func (l *epollLoop) watchOut(c *epollConn, on bool) {
	if c.wantOut == on {
		return
	}
	events := uint32(syscall.EPOLLIN)
	if on {
		events |= syscall.EPOLLOUT
	}
	ev := syscall.EpollEvent{Events: events, Fd: c.key}
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
		l.fail(c, os.NewSyscallError("epoll_ctl", err), false)
		return
	}
	c.wantOut = on
}

// event handles what epoll reported for c.
func (l *epollLoop) event(c *epollConn, ev uint32) {
	switch c.state {
	case stateConnecting:
		if ev&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) == 0 {
			return
		}
		if err := connectError(c.fd); err != nil {
			l.fail(c, err, false)
			return
		}
		l.write(c)
	case stateWriting:
		if ev&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
			l.write(c)
		}
		if c.state == stateWriting && ev&syscall.EPOLLIN != 0 {
			l.read(c) // the server answers before taking the whole request
		}
	case stateReading:
		l.read(c)
	}
}

// connectError is the outcome of a non-blocking connect.
func connectError(fd int) error {
	errno, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
	switch {
	case err != nil:
		return os.NewSyscallError("getsockopt", err)
	case errno != 0:
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.Errno(errno))}
	}
	return nil
}

// read reads what the socket has and scans the response so far. A
// response that arrives in one read is scanned in the loop's buffer; one
// that spans reads is gathered in the connection's own.
func (l *epollLoop) read(c *epollConn) {
	buf := l.buf
	if len(c.in) > 0 {
		if cap(c.in)-len(c.in) < rawReadBuffer/4 {
			c.in = grow(c.in, rawReadBuffer)[:len(c.in)]
		}
		buf = c.in[len(c.in):cap(c.in)]
	}
	n, err := rawIO(syscall.SYS_READ, c.fd, buf)
	for err == syscall.EINTR {
		n, err = rawIO(syscall.SYS_READ, c.fd, buf)
	}
	switch {
	case err == syscall.EAGAIN:
		return
	case err != nil:
		l.fail(c, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)}, len(c.in) > 0)
		return
	}
	in := l.buf[:n]
	if len(c.in) > 0 {
		c.in = c.in[:len(c.in)+n]
		in = c.in
	}
	r, err := c.scan.scan(in, n == 0)
	switch {
	case err == errIncomplete:
		if len(c.in) == 0 {
			c.in = append(c.in, in...)
		}
	case err != nil:
		l.fail(c, err, len(in) > 0)
	default:
		keep := r.keep && r.n == len(in) && n > 0 && c.woff == len(c.wbuf)
		l.complete(c, Response{Status: r.status, Body: r.body}, keep)
	}
}

// fail ends c's request with err, closing its connection. A request that
// went out on a reused connection the server closed before a byte of the
// response arrived (got) is resent once, on a new connection, as raw.go
// does: the server dropped an idle connection and never saw it.
func (l *epollLoop) fail(c *epollConn, err error, got bool) {
	l.closeConn(c)
	if c.reused && !got && !isTimeout(err) {
		l.send(c)
		return
	}
	if k := connectFailure(err); k != connectNone {
		l.connectFailed(c, k)
		return
	}
	l.complete(c, Response{Err: err}, false)
}

// connectFailed records c's failed connection attempt, which sent nothing,
// and makes the connection wait out its backoff (at most to the window's
// end); then retry sends the same request again.
func (l *epollLoop) connectFailed(c *epollConn, k connectKind) {
	e, now := l.e, time.Now()
	e.count(c.i, c.rec, c.sent, outcome{class: classConnect, conn: k})
	e.reach.failed(now)
	c.state, c.retryAt = stateBackoff, now.Add(c.backoff.wait())
	if end := e.plan.end(); c.retryAt.After(end) {
		c.retryAt = end
	}
	l.waiting++
	if l.retryAt.IsZero() || c.retryAt.Before(l.retryAt) {
		l.retryAt = c.retryAt
	}
}

// retry sends again the requests of the connections whose backoff is over
// at now, decided on anew (closed loop), or ends them when the step
// stopped or the window ended.
func (l *epollLoop) retry(now time.Time) {
	e := l.e
	l.retryAt = time.Time{}
	for _, c := range l.conns {
		if c.state != stateBackoff {
			continue
		}
		if now.Before(c.retryAt) {
			if l.retryAt.IsZero() || c.retryAt.Before(l.retryAt) {
				l.retryAt = c.retryAt
			}
			continue
		}
		l.waiting--
		if e.stopped.Load() || !now.Before(e.plan.end()) {
			l.finish(c)
			continue
		}
		c.sent, c.deadline = now, now.Add(e.cfg.Timeout)
		if l.scanAt.IsZero() || c.deadline.Before(l.scanAt) {
			l.scanAt = c.deadline
		}
		l.send(c) // may fail at once and wait again
	}
}

// complete records c's request and queues the connection for the next.
// A response completed past the deadline is a timeout, as on a connection
// with that deadline.
func (l *epollLoop) complete(c *epollConn, resp Response, keep bool) {
	done := time.Now()
	if resp.Err == nil && !done.Before(c.deadline) {
		resp, keep = Response{Err: errTimedOut}, false
	}
	if resp.Err == nil {
		l.e.reach.answered(done)
		c.backoff.reset()
	}
	if !keep {
		l.closeConn(c)
	}
	e := l.e
	o, rotated := classify(resp, done.Sub(c.sent), e.sc)
	if o.class == classOK {
		c.src.rotate(rotated)
	}
	o.corrected = done.Sub(c.sent)
	e.count(c.i, c.rec, c.sent, o)
	c.state, c.doneAt, c.in = stateIdle, done, c.in[:0]
	l.ready = append(l.ready, c)
}

// expire times out the requests past their deadline and counts the empty
// pools of the warmup once the window has begun. It says until when the
// loop may wait (zero: no limit) and whether it may block at all.
func (l *epollLoop) expire() (until time.Time, block bool) {
	now := time.Now()
	if l.dry > 0 {
		l.countDry(now)
	}
	if !l.scanAt.IsZero() && !now.Before(l.scanAt) {
		l.scanAt = time.Time{}
		for _, c := range l.conns {
			switch {
			case c.state < stateConnecting || c.state > stateReading:
			case !now.Before(c.deadline) && c.state == stateConnecting:
				l.closeConn(c)
				l.connectFailed(c, connectTimeout) // no answer to the handshake
			case !now.Before(c.deadline):
				l.fail(c, errTimedOut, len(c.in) > 0)
			case l.scanAt.IsZero() || c.deadline.Before(l.scanAt):
				l.scanAt = c.deadline
			}
		}
	}
	if l.waiting > 0 && !now.Before(l.retryAt) {
		l.retry(now)
	}
	if len(l.ready) > 0 {
		return time.Time{}, false
	}
	if l.dry > 0 {
		// The stop flag is polled: a dry connection waits for nothing else.
		return now.Add(min(l.e.plan.start().Sub(now), 50*time.Millisecond)), true
	}
	if l.retryAt.IsZero() || (!l.scanAt.IsZero() && l.scanAt.Before(l.retryAt)) {
		return l.scanAt, true
	}
	return l.retryAt, true
}

// countDry counts the empty pools found in the warmup at the window's
// start (as engine.exhausted does), or drops them when the step stopped.
func (l *epollLoop) countDry(now time.Time) {
	e := l.e
	stopped := e.stopped.Load()
	start := e.plan.start()
	if !stopped && now.Before(start) {
		return
	}
	for _, c := range l.conns {
		if c.state != stateDry {
			continue
		}
		if !stopped {
			e.count(c.i, c.rec, start, outcome{class: classExhausted})
		}
		l.dry--
		l.finish(c)
	}
}

// abort ends every request in flight with err and the loop's connections:
// the loop cannot wait any more.
func (l *epollLoop) abort(err error) {
	for _, c := range l.conns {
		if c.state >= stateConnecting && c.state <= stateReading {
			l.closeConn(c)
			o, _ := classify(Response{Err: err}, 0, l.e.sc)
			l.e.count(c.i, c.rec, c.sent, o)
		}
		if c.state != stateDone {
			l.finish(c)
		}
	}
}

func (l *epollLoop) closeConn(c *epollConn) {
	if c.fd >= 0 {
		syscall.Close(c.fd) // leaves the epoll set with its last descriptor
		c.fd, c.wantOut = -1, false
	}
}

// finish ends connection c: no more requests.
func (l *epollLoop) finish(c *epollConn) {
	l.closeConn(c)
	c.rec.flush()
	c.state = stateDone
	l.active--
}
