package load

import (
	"errors"
	"io"
	"testing"
)

// TestRespScan runs respParser's cases through respScan, whole and fed a
// byte at a time (each prefix scanned as one more read arrived, the close
// after the last byte).
func TestRespScan(t *testing.T) {
	for _, tt := range respCases {
		for _, split := range []bool{false, true} {
			if split && len(tt.in) > 1<<16 {
				continue
			}
			in := []byte(tt.in)
			p := respScan{noBody: tt.head}
			r, err := feed(&p, in, split)
			if tt.status == 0 {
				if err == nil {
					t.Errorf("%s (split %v): status %d body %q, want an error", tt.name, split, r.status, r.body)
				}
				continue
			}
			rest := string(in[r.n:])
			if err != nil || r.status != tt.status || string(r.body) != tt.body || r.keep != tt.keep || rest != tt.rest {
				t.Errorf("%s (split %v): status %d body %q keep %v rest %q err %v; want %d %q %v %q",
					tt.name, split, r.status, r.body, r.keep, rest, err, tt.status, tt.body, tt.keep, tt.rest)
			}
		}
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
