package load

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// parsed is what the parser made of one response.
type parsed struct {
	class  string // errClass of the error; "" when the response is complete
	status int
	keep   bool
	body   string
	n      int // bytes the response took
}

// errClass names the kind of error all ways of feeding the parser must
// agree on.
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

// readParsed reads in with readResponse from r (EngineRaw), and says
// whether it read a byte.
func readParsed(r io.Reader, head bool) (parsed, bool) {
	var p respScan
	p.start(head)
	resp, read, err := readResponse(r, nil, &p)
	return scanParsed(resp, err), len(read) > 0
}

// FuzzResponse: whatever a server sends, the epoll engine's scanner gives
// the same response (status, keep-alive, body, length) or the same kind of
// error fed whole, fed a byte per read (every split point at once), and
// fed in two reads cut anywhere (EngineEpoll); and readResponse, reading
// the bytes whole, a byte per read or with io.EOF on the last data
// (EngineRaw), agrees with it. Either tells "closed before a byte" (the
// resend rule) only for an empty answer.
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
		for _, rd := range []struct {
			how  string
			wrap func(io.Reader) io.Reader
		}{{"whole", nil}, {"a byte per read", iotest.OneByteReader}, {"data with EOF", iotest.DataErrReader}} {
			how, r := rd.how, io.Reader(bytes.NewReader(in))
			if rd.wrap != nil {
				r = rd.wrap(r)
			}
			got, gotByte := readParsed(r, head)
			check("readResponse, "+how, got)
			if gotByte != (len(in) > 0) {
				t.Fatalf("readResponse (%s) got %v for %d bytes", how, gotByte, len(in))
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
