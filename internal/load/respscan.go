package load

import (
	"errors"
	"fmt"
	"io"
)

// errIncomplete is scanResponse's "not yet": more bytes must arrive.
var errIncomplete = errors.New("incomplete HTTP response")

// respScan parses one HTTP/1.x response from the bytes received so far,
// for an engine that reads whatever the socket has (EngineEpoll) rather
// than pulling from a reader as respParser does. It follows respParser's
// rules exactly (the framing headers, interim responses, chunked bodies,
// a body delimited by the close, the same limits) and shares its pieces.
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

// line returns the next line without its line ending, with respParser's
// limits: a line must fit rawReadBuffer, a head maxHeaderBytes.
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
