package load

import (
	"context"
	"io"
	"net"
	"net/url"
	"strconv"
	"time"
)

// rawSender is EngineRaw: HTTP/1.1 over one TCP connection (TCP_NODELAY,
// Go's default), no pipelining. The request line is built once per target,
// the rest of the request is the scenario's header block and body, written
// with one write from a reused buffer (on unix inside the wait for the
// response, see wire); the response is read into a reused buffer and
// parsed there by respScan, EngineEpoll's parser, the body left in place.
// Timeouts are connection deadlines.
//
// A connection is reopened after a response that ends it (Connection:
// close, HTTP/1.0 without keep-alive, a body delimited by the close) or a
// failed request. A request is resent once, on a new connection, only when
// it went out on a reused connection and the server closed that connection
// (EOF or reset) before a single byte of the response arrived: the server
// dropped an idle connection and never saw the request. Anything after the
// first byte, or on a new connection, is the request's failure.
type rawSender struct {
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// slack is how much earlier than asked the connection's deadline may
	// fall before it is moved: resetting a deadline is a runtime timer
	// update, so it is done only when the one set is slack short.
	slack time.Duration

	target *url.URL // the target the request line and addr were built for
	method string
	line   []byte // "METHOD /path?query HTTP/1.1\r\n"
	addr   string // host:port to dial

	conn net.Conn // nil until dialled and after a failure or a close
	wire *wire    // conn's reader and writer
	wbuf []byte   // the request on the wire
	in   []byte   // the response as read; its body, unless chunked, is in here
	scan respScan
	dl   time.Time // deadline set on conn
}

// rawReadBuffer holds a typical response head and body in one read.
const rawReadBuffer = 16 << 10

// NewRawSender returns the EngineRaw Sender factory (http targets only).
// A request may time out up to 1% of timeout before its deadline (see slack).
func NewRawSender(timeout time.Duration) NewSenderFunc {
	return func(int) Sender {
		d := &net.Dialer{}
		return &rawSender{dial: d.DialContext, slack: timeout / 100}
	}
}

func (s *rawSender) Send(r *Request, deadline time.Time) Response {
	s.prepare(r)
	s.wbuf = appendRequest(s.wbuf[:0], s.line, r)
	for {
		reused := s.conn != nil // only a connection that completed an exchange stays open
		if !reused {
			if err := s.connect(deadline); err != nil {
				return Response{Err: err}
			}
		}
		resp, got, err := s.exchange(r.Method, deadline)
		switch {
		case err == nil:
			if !resp.keep {
				s.closeConn()
			}
			return Response{Status: resp.status, Body: resp.body}
		case reused && !got && !isTimeout(err):
			s.closeConn() // the server closed an idle connection: resend once
		default:
			s.closeConn()
			return Response{Err: err}
		}
	}
}

// prepare builds the request line and dial address when the target changes.
func (s *rawSender) prepare(r *Request) {
	if r.URL == s.target && r.Method == s.method {
		return
	}
	if r.URL != s.target {
		s.closeConn()
		s.addr = hostPort(r.URL)
	}
	s.target, s.method = r.URL, r.Method
	s.line = appendRequestLine(s.line[:0], r.Method, r.URL)
}

// appendRequestLine appends "METHOD /path?query HTTP/1.1\r\n".
func appendRequestLine(b []byte, method string, u *url.URL) []byte {
	return append(append(append(append(b, method...), ' '), u.RequestURI()...), " HTTP/1.1\r\n"...)
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// appendRequest renders the request: line (see appendRequestLine), header
// block, Content-Length when there is a body or the method implies one,
// blank line, body.
func appendRequest(b, line []byte, r *Request) []byte {
	b = append(b, line...)
	b = append(b, r.Header...)
	if len(r.Body) > 0 || r.Method == "POST" || r.Method == "PUT" || r.Method == "PATCH" {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(r.Body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, r.Body...)
}

func (s *rawSender) connect(deadline time.Time) error {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	conn, err := s.dial(ctx, "tcp", s.addr)
	if err != nil {
		return err
	}
	s.conn, s.wire, s.dl = conn, newWire(conn), time.Time{}
	return nil
}

func (s *rawSender) closeConn() {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
}

func (s *rawSender) Close() { s.closeConn() }

// exchange writes the request and reads the response. got reports whether
// any byte of a response arrived; the response's keep whether the
// connection may carry the next request.
func (s *rawSender) exchange(method string, deadline time.Time) (r scanned, got bool, err error) {
	if d := deadline.Sub(s.dl); d < 0 || d > s.slack {
		if err := s.conn.SetDeadline(deadline); err != nil {
			return scanned{}, false, err
		}
		s.dl = deadline
	}
	if err := s.wire.send(s.wbuf); err != nil { // written by the first read, on unix
		return scanned{}, false, err
	}
	s.scan.start(method == "HEAD")
	r, s.in, err = readResponse(s.wire, s.in[:0], &s.scan)
	if err == nil && r.n < len(s.in) {
		r.keep = false // bytes nobody asked for: the stream is out of step
	}
	return r, len(s.in) > 0, err
}

// readResponse reads from rd, appending to in, until p (started) has
// scanned one complete response or failed, and returns the bytes read. Each
// read fills what in has free, at least a quarter of rawReadBuffer, and
// enough for what p needs next.
func readResponse(rd io.Reader, in []byte, p *respScan) (scanned, []byte, error) {
	for {
		if free := cap(in) - len(in); free < rawReadBuffer/4 || free < p.need-len(in) {
			in = grow(in, max(rawReadBuffer, p.need-len(in)))[:len(in)]
		}
		n, err := rd.Read(in[len(in):cap(in)])
		in = in[:len(in)+n]
		if err != nil && err != io.EOF {
			return scanned{}, in, err
		}
		if r, err := p.scan(in, err == io.EOF); err != errIncomplete {
			return r, in, err
		}
	}
}

// grow extends b by n bytes, reusing its capacity when it can.
func grow(b []byte, n int) []byte {
	if need := len(b) + n; need > cap(b) {
		nb := make([]byte, len(b), max(need, 2*cap(b)))
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}
