//go:build unix

package load

import (
	"io"
	"net"
	"syscall"
)

// wire is what the raw sender reads its responses from. Its first read
// after a request writes the request and waits for the response in one
// step: it runs inside syscall.RawConn.Read, which clears the socket's
// readiness before calling back, so the callback writes, reports "not
// ready" and parks until the response is readable. A plain Write then Read
// would try a read that cannot succeed yet (the server has not even seen
// the request), costing a syscall per request that wrk does not make.
// Nothing can arrive before the request is written, so no wake-up is lost.
type wire struct {
	conn net.Conn
	rc   syscall.RawConn // nil: conn is not a socket; plain Write and Read
	out  []byte          // request bytes the next Read must write first
	p    []byte          // the Read's buffer
	n    int
	err  error
	fn   func(fd uintptr) bool // w.io, bound once
}

func newWire(conn net.Conn) *wire {
	w := &wire{conn: conn}
	if sc, ok := conn.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			w.rc = rc
		}
	}
	w.fn = w.io
	return w
}

// send arranges for req to be written by the next Read.
func (w *wire) send(req []byte) error {
	if w.rc == nil {
		_, err := w.conn.Write(req)
		return err
	}
	w.out = req
	return nil
}

func (w *wire) Read(p []byte) (int, error) {
	if w.rc == nil {
		return w.conn.Read(p)
	}
	for {
		w.p, w.n, w.err = p, 0, nil
		if err := w.rc.Read(w.fn); err != nil {
			return 0, err // deadline, closed
		}
		if w.err != nil || len(w.out) == 0 {
			return w.n, w.err
		}
		// The socket took only part of the request: finish it with a
		// blocking write, then read the ordinary way (read first, then wait).
		out := w.out
		w.out = nil
		if _, err := w.conn.Write(out); err != nil {
			return 0, err
		}
	}
}

// io is the RawConn callback: write what is pending, else read; false
// means "wait until readable".
func (w *wire) io(fd uintptr) bool {
	if len(w.out) > 0 {
		n, err := ignoringEINTR(func() (int, error) { return syscall.Write(int(fd), w.out) })
		if n > 0 {
			w.out = w.out[n:]
		}
		switch {
		case err != nil && err != syscall.EAGAIN:
			w.out, w.err = nil, &net.OpError{Op: "write", Net: "tcp", Err: err}
			return true
		case len(w.out) > 0:
			return true // partial: Read finishes it
		}
		return false // written: wait for the response
	}
	n, err := ignoringEINTR(func() (int, error) { return syscall.Read(int(fd), w.p) })
	switch {
	case err == syscall.EAGAIN:
		return false
	case err != nil:
		w.err = &net.OpError{Op: "read", Net: "tcp", Err: err}
	case n == 0:
		w.err = io.EOF
	default:
		w.n = n
	}
	return true
}

func ignoringEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != syscall.EINTR {
			return n, err
		}
	}
}
