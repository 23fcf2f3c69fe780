package load

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxHeaderBytes bounds a response head, as net/http's default does.
const maxHeaderBytes = 1 << 20

// errIncomplete is scanResponse's "not yet": more bytes must arrive.
var errIncomplete = errors.New("incomplete HTTP response")

// respScan is the HTTP/1.x response parser of both own-client engines. It
// parses one response from the bytes received so far: EngineEpoll scans
// whatever the socket has, EngineRaw what its blocking reads gathered
// (readResponse, raw.go). It reads only the framing headers (status,
// Content-Length, Transfer-Encoding, Connection), skips interim (1xx)
// responses, reassembles chunked bodies and takes a body delimited by the
// close, within the limits: a line must fit rawReadBuffer, a head (or one
// chunk's framing, or the trailers) maxHeaderBytes, a body maxBody.
// A scan starts over from the first byte each time, so nothing of a
// half-parsed response is kept but need: content-length and chunk data
// are skipped until they can be complete, which keeps the work linear in
// the response for all but a head or chunk framing split over many reads.
type respScan struct {
	noBody bool   // the request was HEAD
	body   []byte // a chunked body, reassembled; reused
	need   int    // scanning is pointless before this many bytes arrived
}

// start readies p for the response to a new request (head: a HEAD
// request). What a response given up half-way left in need is forgotten.
func (p *respScan) start(head bool) { p.noBody, p.need = head, 0 }

// scanned is a complete response.
type scanned struct {
	status int
	keep   bool   // the connection may carry the next request
	body   []byte // in the scanned bytes, or in respScan.body (chunked)
	n      int    // bytes of in the response took
}

// scan parses in, everything received of the response so far; eof says
// the server has closed the connection after it. The error is
// errIncomplete while more bytes may complete the response.
func (p *respScan) scan(in []byte, eof bool) (scanned, error) {
	if len(in) < p.need && !eof {
		return scanned{}, errIncomplete
	}
	r, err := p.response(in, eof)
	switch {
	case err == errIncomplete && !eof:
		return r, err
	case err == errIncomplete && len(in) == 0:
		err = io.EOF
	case err == errIncomplete:
		err = io.ErrUnexpectedEOF
	}
	p.need = 0 // the response is over, complete or not
	return r, err
}

func (p *respScan) response(in []byte, eof bool) (scanned, error) {
	var c cursor
	for {
		h, err := c.respHead(in)
		if err != nil {
			return scanned{}, err
		}
		switch {
		case h.status == 101:
			return scanned{}, fmt.Errorf("%w: unexpected 101 Switching Protocols", errMalformed)
		case h.status < 200:
			continue
		}
		r := scanned{status: h.status, keep: !h.close && (!h.http10 || h.alive)}
		switch {
		case p.noBody || h.status == 204 || h.status == 304:
		case h.chunked:
			r.body, err = p.chunked(&c, in)
		case h.length >= 0:
			r.body, err = p.fixed(&c, in, h.length)
		default:
			r.keep = false
			r.body, err = c.toEOF(in, eof)
		}
		r.n = c.off
		return r, err
	}
}

// fixed takes a body of exactly n bytes.
func (p *respScan) fixed(c *cursor, in []byte, n int64) ([]byte, error) {
	if n > maxBody {
		return nil, errBodyTooBig
	}
	end := c.off + int(n)
	if len(in) < end {
		p.need = end
		return nil, errIncomplete
	}
	b := in[c.off:end]
	c.off = end
	return b, nil
}

// chunked reassembles a chunked body into p.body: size lines (extensions
// ignored), data, the last chunk and the trailer section, discarded.
func (p *respScan) chunked(c *cursor, in []byte) ([]byte, error) {
	p.body = p.body[:0]
	for {
		c.head = 0
		l, err := c.line(in)
		if err != nil {
			return nil, err
		}
		size, ok := parseChunkSize(l)
		switch {
		case !ok:
			return nil, fmt.Errorf("%w: chunk size %.40q", errMalformed, l)
		case size == 0:
			return p.body, c.trailers(in)
		case size > maxBody-int64(len(p.body)):
			return nil, errBodyTooBig
		}
		end := c.off + int(size)
		if len(in) < end {
			p.need = end
			return nil, errIncomplete
		}
		p.body = append(p.body, in[c.off:end]...)
		c.off = end
		if l, err := c.line(in); err != nil || len(l) != 0 {
			if err == errIncomplete {
				return nil, err
			}
			return nil, fmt.Errorf("%w: chunk not followed by CRLF", errMalformed)
		}
	}
}

// cursor walks the scanned bytes.
type cursor struct {
	off  int // next byte
	head int // bytes of the head (or of one chunk's framing) so far
}

// line returns the next line without its line ending, within the limits:
// a line must fit rawReadBuffer, a head maxHeaderBytes.
func (c *cursor) line(in []byte) ([]byte, error) {
	rest := in[c.off:]
	i := indexByte(rest, '\n')
	if i < 0 {
		if len(rest) >= rawReadBuffer || c.head+len(rest) > maxHeaderBytes {
			return nil, fmt.Errorf("%w: line or head too long", errMalformed)
		}
		return nil, errIncomplete
	}
	c.head += i + 1
	if i+1 > rawReadBuffer || c.head > maxHeaderBytes {
		return nil, fmt.Errorf("%w: line or head too long", errMalformed)
	}
	c.off += i + 1
	l := rest[:i]
	if n := len(l); n > 0 && l[n-1] == '\r' {
		l = l[:n-1]
	}
	return l, nil
}

// respHead parses a status line and the header fields up to the blank line.
func (c *cursor) respHead(in []byte) (respHead, error) {
	l, err := c.line(in)
	if err != nil {
		return respHead{}, err
	}
	h := respHead{length: -1}
	if h.status, h.http10, err = parseStatusLine(l); err != nil {
		return h, err
	}
	for {
		l, err := c.line(in)
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

func (c *cursor) trailers(in []byte) error {
	c.head = 0
	for {
		l, err := c.line(in)
		if err != nil {
			return err
		}
		if len(l) == 0 {
			return nil
		}
	}
}

// toEOF takes a body delimited by the server closing the connection.
func (c *cursor) toEOF(in []byte, eof bool) ([]byte, error) {
	b := in[c.off:]
	switch {
	case len(b) > maxBody:
		return nil, errBodyTooBig
	case !eof:
		return nil, errIncomplete
	}
	c.off = len(in)
	return b, nil
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
