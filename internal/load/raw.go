package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
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
// response, see wire); the response is parsed from a reused bufio.Reader
// into a reused body buffer. Timeouts are connection deadlines.
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

	conn net.Conn      // nil until dialled and after a failure or a close
	wire *wire         // conn's reader and writer
	br   *bufio.Reader // reads wire
	wbuf []byte        // the request on the wire
	body []byte        // response body buffer
	dl   time.Time     // deadline set on conn
}

// rawReadBuffer holds a typical response head and body in one read.
const rawReadBuffer = 16 << 10

// maxHeaderBytes bounds a response head, as net/http's default does.
const maxHeaderBytes = 1 << 20

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
		status, keep, got, err := s.exchange(r.Method, deadline)
		switch {
		case err == nil:
			if !keep {
				s.closeConn()
			}
			return Response{Status: status, Body: s.body}
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
	if s.br == nil {
		s.br = bufio.NewReaderSize(s.wire, rawReadBuffer)
	} else {
		s.br.Reset(s.wire)
	}
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
// any byte of a response arrived; keep whether the connection may carry
// the next request.
func (s *rawSender) exchange(method string, deadline time.Time) (status int, keep, got bool, err error) {
	if d := deadline.Sub(s.dl); d < 0 || d > s.slack {
		if err := s.conn.SetDeadline(deadline); err != nil {
			return 0, false, false, err
		}
		s.dl = deadline
	}
	if err := s.wire.send(s.wbuf); err != nil { // written by the first read, on unix
		return 0, false, false, err
	}
	p := respParser{br: s.br, body: s.body[:0]}
	status, keep, err = p.read(method == "HEAD")
	s.body = p.body
	if err == nil && keep && s.br.Buffered() > 0 {
		keep = false // bytes nobody asked for: the stream is out of step
	}
	return status, keep, p.got, err
}

// respParser reads one HTTP/1.x response from br.
type respParser struct {
	br   *bufio.Reader
	body []byte // the body, appended to
	got  bool   // a byte of the response has arrived
	head int    // bytes of the head read so far
}

// respHead is what the head says about the body and the connection.
type respHead struct {
	status  int
	http10  bool
	length  int64 // Content-Length; -1 when absent
	chunked bool
	close   bool // Connection: close
	alive   bool // Connection: keep-alive
}

var (
	errMalformed  = errors.New("malformed HTTP response")
	errBodyTooBig = fmt.Errorf("response body over %d bytes", maxBody)
)

// read reads the response, skipping interim (1xx) responses. noBody is set
// for HEAD requests.
func (p *respParser) read(noBody bool) (status int, keep bool, err error) {
	for {
		h, err := p.readHead()
		if err != nil {
			return 0, false, err
		}
		switch {
		case h.status == 101:
			return 0, false, fmt.Errorf("%w: unexpected 101 Switching Protocols", errMalformed)
		case h.status < 200:
			continue
		}
		keep = !h.close && (!h.http10 || h.alive)
		switch {
		case noBody || h.status == 204 || h.status == 304:
		case h.chunked:
			err = p.readChunked()
		case h.length >= 0:
			err = p.readN(h.length)
		default:
			keep = false
			err = p.readToEOF()
		}
		if err != nil {
			return 0, false, err
		}
		return h.status, keep, nil
	}
}

// line reads one line of the head (or of a chunked body's framing) without
// its line ending.
func (p *respParser) line() ([]byte, error) {
	l, err := p.br.ReadSlice('\n')
	if len(l) > 0 {
		p.got = true
	}
	p.head += len(l)
	switch {
	case err == bufio.ErrBufferFull || p.head > maxHeaderBytes:
		return nil, fmt.Errorf("%w: line or head too long", errMalformed)
	case err == io.EOF && p.got: // closed inside the response, at a line's start too
		return nil, io.ErrUnexpectedEOF
	case err != nil:
		return nil, err
	}
	l = l[:len(l)-1]
	if n := len(l); n > 0 && l[n-1] == '\r' {
		l = l[:n-1]
	}
	return l, nil
}

func (p *respParser) readHead() (respHead, error) {
	l, err := p.line()
	if err != nil {
		return respHead{}, err
	}
	h := respHead{length: -1}
	if h.status, h.http10, err = parseStatusLine(l); err != nil {
		return h, err
	}
	for {
		l, err := p.line()
		if err != nil {
			return h, err
		}
		if len(l) == 0 {
			return h, nil
		}
		if err := h.field(l); err != nil {
			return h, err
		}
	}
}

// parseStatusLine parses "HTTP/1.x NNN reason".
func parseStatusLine(l []byte) (status int, http10 bool, err error) {
	if len(l) < 12 || string(l[:7]) != "HTTP/1." || (l[7] != '0' && l[7] != '1') ||
		l[8] != ' ' || (len(l) > 12 && l[12] != ' ') {
		return 0, false, fmt.Errorf("%w: status line %.40q", errMalformed, l)
	}
	for _, c := range l[9:12] {
		if c < '0' || c > '9' {
			return 0, false, fmt.Errorf("%w: status line %.40q", errMalformed, l)
		}
		status = status*10 + int(c-'0')
	}
	if status < 100 {
		return 0, false, fmt.Errorf("%w: status %d", errMalformed, status)
	}
	return status, l[7] == '0', nil
}

// field takes in one header line; only the framing headers matter.
func (h *respHead) field(l []byte) error {
	if l[0] == ' ' || l[0] == '\t' {
		return nil // obsolete line folding: continues a header we ignore
	}
	colon := indexByte(l, ':')
	if colon <= 0 {
		return fmt.Errorf("%w: header line %.40q", errMalformed, l)
	}
	name, value := l[:colon], trimOWS(l[colon+1:])
	switch {
	case equalFold(name, "content-length"):
		n, ok := parseLength(value)
		if !ok || (h.length >= 0 && h.length != n) {
			return fmt.Errorf("%w: Content-Length %.40q", errMalformed, value)
		}
		h.length = n
	case equalFold(name, "transfer-encoding"):
		if !equalFold(lastToken(value), "chunked") {
			return fmt.Errorf("%w: unsupported Transfer-Encoding %.40q", errMalformed, value)
		}
		h.chunked = true
	case equalFold(name, "connection"):
		for len(value) > 0 {
			var tok []byte
			tok, value = nextToken(value)
			h.close = h.close || equalFold(tok, "close")
			h.alive = h.alive || equalFold(tok, "keep-alive")
		}
	}
	return nil
}

// readN reads a body of exactly n bytes.
func (p *respParser) readN(n int64) error {
	if n > maxBody-int64(len(p.body)) {
		return errBodyTooBig
	}
	start := len(p.body)
	p.body = grow(p.body, int(n))
	if _, err := io.ReadFull(p.br, p.body[start:]); err != nil {
		return unexpected(err)
	}
	p.got = p.got || n > 0
	return nil
}

// readChunked reads a chunked body: size lines (extensions ignored), data,
// the last chunk and the trailer section, which is discarded.
func (p *respParser) readChunked() error {
	for range maxBody + 1 { // each round reads at least one byte of the bound
		p.head = 0
		l, err := p.line()
		if err != nil {
			return unexpected(err)
		}
		size, ok := parseChunkSize(l)
		if !ok {
			return fmt.Errorf("%w: chunk size %.40q", errMalformed, l)
		}
		if size == 0 {
			return p.skipTrailers()
		}
		if err := p.readN(size); err != nil {
			return err
		}
		if l, err := p.line(); err != nil || len(l) != 0 {
			return fmt.Errorf("%w: chunk not followed by CRLF", errMalformed)
		}
	}
	return errBodyTooBig
}

func (p *respParser) skipTrailers() error {
	p.head = 0
	for {
		l, err := p.line()
		if err != nil {
			return unexpected(err)
		}
		if len(l) == 0 {
			return nil
		}
	}
}

// readToEOF reads a body delimited by the server closing the connection.
func (p *respParser) readToEOF() error {
	for {
		if len(p.body) >= maxBody {
			if _, err := p.br.Peek(1); err == io.EOF {
				return nil
			}
			return errBodyTooBig
		}
		start := len(p.body)
		p.body = grow(p.body, min(maxBody-start, rawReadBuffer))
		n, err := p.br.Read(p.body[start:])
		p.body = p.body[:start+n]
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return err
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

// unexpected turns an EOF inside a response into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseChunkSize parses "1a3f[;ext...]".
func parseChunkSize(l []byte) (int64, bool) {
	if i := indexByte(l, ';'); i >= 0 {
		l = l[:i]
	}
	l = trimOWS(l)
	if len(l) == 0 || len(l) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range l {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | int64(d)
	}
	return n, true
}

func indexByte(b []byte, c byte) int { return bytes.IndexByte(b, c) }

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// nextToken splits a comma-separated list.
func nextToken(v []byte) (tok, rest []byte) {
	if i := indexByte(v, ','); i >= 0 {
		return trimOWS(v[:i]), v[i+1:]
	}
	return trimOWS(v), nil
}

func lastToken(v []byte) []byte {
	var tok []byte
	for len(v) > 0 {
		t, rest := nextToken(v)
		if len(t) > 0 {
			tok = t
		}
		v = rest
	}
	return tok
}

// equalFold compares ASCII b to lower-case s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
