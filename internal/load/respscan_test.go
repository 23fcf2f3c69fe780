package load

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// respCases are responses respScan must parse as given whatever the reads
// they arrive in (TestRespScan, TestReadResponse; FuzzResponse's seeds).
var respCases = []struct {
	name   string
	in     string
	head   bool   // the request was HEAD
	status int    // 0: an error is expected
	body   string // expected body
	keep   bool
	rest   string // what must be left unread
}{
	{name: "content-length", in: ok200 + "Content-Type: application/json\r\nContent-Length: 5\r\n\r\nhello",
		status: 200, body: "hello", keep: true},
	{name: "header names any case, space around values", in: ok200 + "content-LENGTH:\t 5 \r\n\r\nhello",
		status: 200, body: "hello", keep: true},
	{name: "same content-length twice", in: ok200 + "Content-Length: 2\r\nContent-Length: 2\r\n\r\nhi",
		status: 200, body: "hi", keep: true},
	{name: "chunked with extensions and trailers",
		in:     ok200 + "Transfer-Encoding: chunked\r\n\r\n5;ext=1;q=\"x\"\r\nhello\r\nA \r\n, chunked!\r\n0\r\nX-Trailer: 1\r\nY: 2\r\n\r\n",
		status: 200, body: "hello, chunked!", keep: true},
	{name: "chunked beats content-length", in: ok200 + "Content-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
		status: 200, body: "hi", keep: true},
	{name: "zero-length body", in: ok200 + "Content-Length: 0\r\n\r\n", status: 200, keep: true},
	{name: "204 has no body", in: "HTTP/1.1 204 No Content\r\n\r\n", status: 204, keep: true},
	{name: "304 ignores its content-length", in: "HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n\r\n",
		status: 304, keep: true},
	{name: "HEAD ignores content-length", in: ok200 + "Content-Length: 7\r\n\r\n", head: true, status: 200, keep: true},
	{name: "interim responses are skipped", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\n" +
		ok200 + "Content-Length: 2\r\n\r\nok", status: 200, body: "ok", keep: true},
	{name: "HTTP/1.0 body delimited by close", in: "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nold style",
		status: 200, body: "old style"},
	{name: "HTTP/1.0 keep-alive with length", in: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nokNEXT",
		status: 200, body: "ok", keep: true, rest: "NEXT"},
	{name: "HTTP/1.0 with length but no keep-alive", in: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
		status: 200, body: "ok"},
	{name: "connection close", in: ok200 + "Connection: foo, close\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok"},
	{name: "HTTP/1.1 without length reads to the close", in: ok200 + "\r\nuntil eof", status: 200, body: "until eof"},
	{name: "bare LF line endings", in: "HTTP/1.1 404 Not Found\nContent-Length: 1\n\nx", status: 404, body: "x", keep: true},
	{name: "status without reason", in: "HTTP/1.1 500\r\nContent-Length: 0\r\n\r\n", status: 500, keep: true},
	{name: "head over the read buffer", in: ok200 + strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 20) +
		"Content-Length: 2\r\n\r\nok", status: 200, body: "ok", keep: true},
	{name: "body over the read buffer", in: ok200 + "Content-Length: 49152\r\n\r\n" + strings.Repeat("b", 3*rawReadBuffer),
		status: 200, body: strings.Repeat("b", 3*rawReadBuffer), keep: true},
	{name: "chunked body over the read buffer", in: chunkedResp("HTTP/1.1 200 OK", nil, strings.Repeat("c", 3*rawReadBuffer), 5000),
		status: 200, body: strings.Repeat("c", 3*rawReadBuffer), keep: true},
	{name: "close-delimited body of maxBody", in: ok200 + "\r\n" + strings.Repeat("x", maxBody), status: 200, body: strings.Repeat("x", maxBody)},
	{name: "leaves the next response unread", in: ok200 + "Content-Length: 1\r\n\r\nx" + ok200, status: 200, body: "x", keep: true, rest: ok200},

	{name: "malformed status line", in: "SSH-2.0-OpenSSH_9.6\r\n\r\n"},
	{name: "HTTP/2 status line", in: "HTTP/2 200\r\n\r\n"},
	{name: "four-digit status", in: "HTTP/1.1 2000 OK\r\n\r\n"},
	{name: "status below 100", in: "HTTP/1.1 099 Odd\r\n\r\n"},
	{name: "101 switching protocols", in: "HTTP/1.1 101 Switching Protocols\r\n\r\n"},
	{name: "header without colon", in: ok200 + "Content-Length 5\r\n\r\nhello"},
	{name: "bad content-length", in: ok200 + "Content-Length: 5x\r\n\r\nhello"},
	{name: "negative content-length", in: ok200 + "Content-Length: -1\r\n\r\n"},
	{name: "conflicting content-lengths", in: ok200 + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"},
	{name: "unsupported transfer-encoding", in: ok200 + "Transfer-Encoding: gzip\r\n\r\nxx"},
	{name: "body over maxBody", in: ok200 + "Content-Length: 8388609\r\n\r\n"},
	{name: "close-delimited body over maxBody", in: ok200 + "\r\n" + strings.Repeat("x", maxBody+1)},
	{name: "chunks over maxBody", in: ok200 + "Transfer-Encoding: chunked\r\n\r\n800000\r\n" + strings.Repeat("x", maxBody) + "\r\n1\r\nx\r\n0\r\n\r\n"},
	{name: "closed mid-body", in: ok200 + "Content-Length: 10\r\n\r\nhello"},
	{name: "closed mid-head", in: ok200 + "Content-Le"},
	{name: "closed mid-chunk", in: ok200 + "Transfer-Encoding: chunked\r\n\r\n5\r\nhel"},
	{name: "closed before the last chunk", in: ok200 + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"},
	{name: "closed in the trailers", in: ok200 + "Transfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n"},
	{name: "bad chunk size", in: ok200 + "Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"},
	{name: "chunk without CRLF", in: ok200 + "Transfer-Encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n"},
	{name: "empty response", in: ""},
	{name: "header line over the buffer", in: ok200 + "X: " + strings.Repeat("y", rawReadBuffer) + "\r\n\r\n"},
}

// TestRespScan runs respCases through respScan, whole and fed a byte at a
// time (each prefix scanned as one more read arrived, the close after the
// last byte): EngineEpoll's way.
func TestRespScan(t *testing.T) {
	for _, tt := range respCases {
		for _, split := range []bool{false, true} {
			if split && len(tt.in) > 1<<16 {
				continue // megabytes a byte at a time only cost time
			}
			in := []byte(tt.in)
			p := respScan{noBody: tt.head}
			r, err := feed(&p, in, split)
			checkCase(t, tt.name+" (split "+strconv.FormatBool(split)+")", tt.status, tt.body, tt.keep, tt.rest,
				r, string(in[r.n:]), err)
		}
	}
}

// TestReadResponse runs respCases through readResponse, EngineRaw's way:
// blocking reads from a reader that returns everything at once, a byte at
// a time, or the last bytes together with io.EOF. A byte of the response
// read (the resend rule's "got") is there exactly when the server sent one.
func TestReadResponse(t *testing.T) {
	readers := map[string]func(io.Reader) io.Reader{
		"whole":      func(r io.Reader) io.Reader { return r },
		"a byte":     iotest.OneByteReader,
		"data + EOF": iotest.DataErrReader,
	}
	for _, tt := range respCases {
		for how, wrap := range readers {
			if how == "a byte" && len(tt.in) > 1<<16 {
				continue
			}
			src := strings.NewReader(tt.in)
			var p respScan
			p.start(tt.head)
			r, in, err := readResponse(wrap(src), nil, &p)
			if got := len(in) > 0; got != (len(tt.in) > 0) {
				t.Errorf("%s (%s): read %d bytes of %d", tt.name, how, len(in), len(tt.in))
			}
			unread, _ := io.ReadAll(src)
			checkCase(t, tt.name+" ("+how+")", tt.status, tt.body, tt.keep, tt.rest,
				r, string(in[r.n:])+string(unread), err)
		}
	}
}

// checkCase compares a parsed response with a case's: status 0 wants an
// error.
func checkCase(t *testing.T, name string, status int, body string, keep bool, rest string, r scanned, gotRest string, err error) {
	t.Helper()
	if status == 0 {
		if err == nil {
			t.Errorf("%s: status %d body %.40q, want an error", name, r.status, r.body)
		}
		return
	}
	if err != nil || r.status != status || string(r.body) != body || r.keep != keep || gotRest != rest {
		t.Errorf("%s: status %d body %.40q keep %v rest %.40q err %v; want %d %.40q %v %.40q",
			name, r.status, r.body, r.keep, gotRest, err, status, body, keep, rest)
	}
}

// feed scans in as it would arrive: whole, or one more byte per read; the
// server closes after the last byte.
func feed(p *respScan, in []byte, split bool) (scanned, error) {
	if split {
		for k := 1; k <= len(in); k++ {
			r, err := p.scan(in[:k], false)
			if err != errIncomplete {
				return r, err
			}
		}
	} else if r, err := p.scan(in, false); err != errIncomplete {
		return r, err
	}
	return p.scan(in, true)
}

// TestRespScanEOF: the close before a byte of the response is io.EOF (the
// resend rule needs to tell it apart), inside one io.ErrUnexpectedEOF; a
// scan after a complete response starts afresh.
func TestRespScanEOF(t *testing.T) {
	var p respScan
	if _, err := p.scan(nil, true); err != io.EOF {
		t.Errorf("nothing then close: %v, want io.EOF", err)
	}
	body := ok200 + "Content-Length: 10\r\n\r\nhello"
	if _, err := p.scan([]byte(body), false); err != errIncomplete || p.need != len(body)+5 {
		t.Errorf("half a body: %v, need %d; want incomplete, need %d", err, p.need, len(body)+5)
	}
	if _, err := p.scan([]byte(body), true); !errors.Is(err, io.ErrUnexpectedEOF) || p.need != 0 {
		t.Errorf("half a body then close: %v (need %d), want io.ErrUnexpectedEOF", err, p.need)
	}
	if r, err := p.scan([]byte(ok200+"Content-Length: 2\r\n\r\nhi"), false); err != nil || string(r.body) != "hi" {
		t.Errorf("next response: %q, %v", r.body, err)
	}
}

// TestRespScanStart: a response given up half-way (a timeout, a read
// error) leaves need behind; start forgets it, or the next, shorter
// response would wait for bytes that never come.
func TestRespScanStart(t *testing.T) {
	var p respScan
	half := ok200 + "Content-Length: 4096\r\n\r\nhello"
	if _, err := p.scan([]byte(half), false); err != errIncomplete || p.need <= len(okResp) {
		t.Fatalf("half a body: %v, need %d", err, p.need)
	}
	p.start(false)
	if r, err := p.scan([]byte(okResp), false); err != nil || string(r.body) != "ok" {
		t.Errorf("the next response after start: %q, %v", r.body, err)
	}
}

// BenchmarkRespScan: one scan of each response shape the products send,
// in one read (the common case for both engines).
func BenchmarkRespScan(b *testing.B) {
	for i, s := range seedResponses(b) {
		in := []byte(s)
		b.Run(strconv.Itoa(i), func(b *testing.B) {
			var p respScan
			b.ReportAllocs()
			for b.Loop() {
				p.start(false)
				if _, err := p.scan(in, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadResponse: EngineRaw's reading and parsing of each response
// shape the products send, from a reader that returns it in one read.
func BenchmarkReadResponse(b *testing.B) {
	for i, s := range seedResponses(b) {
		in := []byte(s)
		b.Run(strconv.Itoa(i), func(b *testing.B) {
			var p respScan
			var r bytes.Reader
			buf := make([]byte, 0, rawReadBuffer)
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(in)
				p.start(false)
				if _, _, err := readResponse(&r, buf, &p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
