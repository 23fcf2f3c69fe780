package load

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// parsed is what a parser made of one response.
type parsed struct {
	class  string // errClass of the error; "" when the response is complete
	status int
	keep   bool
	body   string
	n      int // bytes the response took
}

// errClass names the kind of error both parsers must agree on.
func errClass(err error) string {
	switch {
	case err == nil:
		return ""
	case err == io.EOF:
		return "EOF before a byte"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "EOF inside the response"
	case errors.Is(err, errBodyTooBig):
		return "body too big"
	case errors.Is(err, errMalformed):
		return "malformed"
	}
	return "other: " + err.Error()
}

func scanParsed(r scanned, err error) parsed {
	if err != nil {
		return parsed{class: errClass(err)}
	}
	return parsed{status: r.status, keep: r.keep, body: string(r.body), n: r.n}
}

// scanAt scans in as it arrives in reads ending at cuts (ascending, the
// last one len(in)), the server closing after the last: what EngineEpoll
// does with a response whatever the reads it comes in.
func scanAt(in []byte, head bool, cuts []int) parsed {
	p := respScan{noBody: head}
	for _, k := range cuts {
		if r, err := p.scan(in[:k], false); err != errIncomplete {
			return scanParsed(r, err)
		}
	}
	return scanParsed(p.scan(in, true))
}

// parserParsed reads in with respParser from r (EngineRaw).
func parserParsed(in []byte, head bool, r io.Reader) (parsed, bool) {
	br := bufio.NewReaderSize(r, rawReadBuffer)
	p := respParser{br: br}
	status, keep, err := p.read(head)
	if err != nil {
		return parsed{class: errClass(err)}, p.got
	}
	rest, _ := io.ReadAll(br)
	return parsed{status: status, keep: keep, body: string(p.body), n: len(in) - len(rest)}, p.got
}

// FuzzResponse: whatever a server sends, the epoll engine's scanner gives
// the same response (status, keep-alive, body, length) or the same kind of
// error fed whole, fed a byte per read (every split point at once), and
// fed in two reads cut anywhere; and the raw engine's parser, reading the
// bytes whole or a byte per read, agrees with it. Either tells "closed
// before a byte" (the resend rule) only for an empty answer.
func FuzzResponse(f *testing.F) {
	for _, s := range seedResponses(f) {
		f.Add([]byte(s), false, uint16(len(s)/2))
	}
	f.Add([]byte(httpResp("HTTP/1.1 200 OK", nil, hydraTokenBody)), true, uint16(20)) // HEAD
	for _, tt := range respCases {
		if len(tt.in) <= 4<<10 {
			f.Add([]byte(tt.in), tt.head, uint16(len(tt.in)/3))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte, head bool, cut uint16) {
		whole := scanAt(in, head, []int{len(in)})
		check := func(how string, got parsed) {
			t.Helper()
			if got != whole {
				t.Fatalf("%s: %+v\nwhole: %+v\ninput %q", how, got, whole, in)
			}
		}
		if len(in) > 0 {
			check("two reads", scanAt(in, head, []int{int(cut) % len(in), len(in)}))
		}
		if len(in) <= 4<<10 { // a scan per byte: quadratic
			cuts := make([]int, len(in))
			for i := range cuts {
				cuts[i] = i + 1
			}
			check("a byte per read", scanAt(in, head, cuts))
		}
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = bytes.NewReader(in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			got, gotByte := parserParsed(in, head, r)
			check("respParser", got)
			if gotByte != (len(in) > 0) {
				t.Fatalf("respParser got %v for %d bytes", gotByte, len(in))
			}
		}
		if whole.class == "" && (whole.n > len(in) || len(whole.body) > whole.n || whole.status < 200 || whole.status > 999) {
			t.Fatalf("impossible response %+v of %d bytes", whole, len(in))
		}
		if (whole.class == "EOF before a byte") != (len(in) == 0) {
			t.Fatalf("%q: %s", in, whole.class)
		}
	})
}
