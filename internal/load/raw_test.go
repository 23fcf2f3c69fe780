package load

import (
	"bufio"
	"cmp"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// respCases are responses both parsers (respParser, respScan) must agree on.
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

const ok200 = "HTTP/1.1 200 OK\r\n"

func TestRespParser(t *testing.T) {
	for _, tt := range respCases {
		for _, split := range []bool{false, true} {
			if split && len(tt.in) > 1<<16 {
				continue // megabytes a byte at a time only cost time
			}
			var r io.Reader = strings.NewReader(tt.in)
			if split {
				r = iotest.OneByteReader(r) // every read returns one byte
			}
			br := bufio.NewReaderSize(r, rawReadBuffer)
			p := respParser{br: br}
			status, keep, err := p.read(tt.head)
			rest, _ := io.ReadAll(br)
			if tt.status == 0 {
				if err == nil {
					t.Errorf("%s (split %v): status %d body %q, want an error", tt.name, split, status, p.body)
				}
				continue
			}
			if err != nil || status != tt.status || string(p.body) != tt.body || keep != tt.keep || string(rest) != tt.rest {
				t.Errorf("%s (split %v): status %d body %q keep %v rest %q err %v; want %d %q %v %q",
					tt.name, split, status, p.body, keep, rest, err, tt.status, tt.body, tt.keep, tt.rest)
			}
		}
	}
}

func TestRespParserGot(t *testing.T) {
	// got says whether a byte of the response arrived: the resend rule.
	for in, want := range map[string]bool{"": false, "H": true, "HTTP/1.1 200 OK\r\n": true} {
		p := respParser{br: bufio.NewReader(strings.NewReader(in))}
		if _, _, err := p.read(false); err == nil || p.got != want {
			t.Errorf("%q: err %v got %v, want an error and got %v", in, err, p.got, want)
		}
	}
}

// scriptServer accepts connections and runs serve on each (i counts them
// from 0), closing the connection when serve returns.
func scriptServer(t *testing.T, serve func(i int, c net.Conn, br *bufio.Reader)) (*url.URL, *atomic.Int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			i := int(accepted.Add(1) - 1)
			wg.Go(func() {
				defer c.Close()
				// Long enough that a sender's deadline applied seconds
				// late still ends in its own timeout, not the server's.
				c.SetDeadline(time.Now().Add(30 * time.Second))
				serve(i, c, bufio.NewReader(c))
			})
		}
	})
	u, _ := url.Parse("http://" + ln.Addr().String() + "/x")
	return u, &accepted
}

// readReq reads one request; false at EOF or on garbage.
func readReq(br *bufio.Reader) bool {
	r, err := http.ReadRequest(br)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, r.Body)
	return true
}

const okResp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

func serveOK(_ int, c net.Conn, br *bufio.Reader) {
	for readReq(br) {
		io.WriteString(c, okResp)
	}
}

// result names what a Send returned: "200 ok", "socket" or "timeout".
func result(r Response) string {
	switch {
	case r.Err != nil && isTimeout(r.Err):
		return "timeout"
	case r.Err != nil:
		return "socket"
	}
	return strconv.Itoa(r.Status) + " " + string(r.Body)
}

func TestRawSenderConnections(t *testing.T) {
	tests := []struct {
		name    string
		serve   func(i int, c net.Conn, br *bufio.Reader)
		timeout time.Duration
		want    []string // one per Send, in order
		conns   int64    // connections the server accepted
	}{
		{"keep-alive reuses one connection", serveOK, 0,
			[]string{"200 ok", "200 ok", "200 ok"}, 1},
		{"Connection: close, then a new connection", func(_ int, c net.Conn, br *bufio.Reader) {
			if readReq(br) {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
			}
		}, 0, []string{"200 ok", "200 ok", "200 ok"}, 3},
		{"HTTP/1.0 body to the close, then a new connection", func(_ int, c net.Conn, br *bufio.Reader) {
			if readReq(br) {
				io.WriteString(c, "HTTP/1.0 200 OK\r\n\r\nok")
			}
		}, 0, []string{"200 ok", "200 ok"}, 2},
		{"idle connection closed by the server: resent once", func(i int, c net.Conn, br *bufio.Reader) {
			if i > 0 {
				serveOK(i, c, br)
			} else if readReq(br) {
				io.WriteString(c, okResp) // keep-alive, then close without a word
			}
		}, 0, []string{"200 ok", "200 ok", "200 ok"}, 2},
		{"closed mid-response on a reused connection: no resend", func(i int, c net.Conn, br *bufio.Reader) {
			if i > 0 {
				serveOK(i, c, br)
				return
			}
			if readReq(br) {
				io.WriteString(c, okResp)
			}
			if readReq(br) {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Le")
			}
		}, 0, []string{"200 ok", "socket", "200 ok"}, 2},
		{"closed mid-body: no resend", func(i int, c net.Conn, br *bufio.Reader) {
			if readReq(br) {
				io.WriteString(c, okResp)
			}
			if readReq(br) {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
			}
		}, 0, []string{"200 ok", "socket"}, 1},
		{"closed before a response on a new connection: no resend", func(_ int, _ net.Conn, br *bufio.Reader) {
			readReq(br)
		}, 0, []string{"socket", "socket"}, 2},
		{"malformed response", func(_ int, c net.Conn, br *bufio.Reader) {
			if readReq(br) {
				io.WriteString(c, "SSH-2.0-OpenSSH_9.6\r\n")
				readReq(br)
			}
		}, 0, []string{"socket"}, 1},
		{"bytes after the response end the connection", func(_ int, c net.Conn, br *bufio.Reader) {
			if readReq(br) {
				io.WriteString(c, okResp+"EXTRA")
				readReq(br)
			}
		}, 0, []string{"200 ok", "200 ok"}, 2},
		{"slow server, a byte per write", func(_ int, c net.Conn, br *bufio.Reader) {
			for readReq(br) {
				for i := range len(okResp) {
					c.Write([]byte{okResp[i]})
					time.Sleep(time.Millisecond)
				}
			}
		}, 0, []string{"200 ok", "200 ok"}, 1},
		{"hangs past the deadline", func(_ int, c net.Conn, br *bufio.Reader) {
			readReq(br)
			readReq(br) // until the client gives up and closes
		}, 150 * time.Millisecond, []string{"timeout", "timeout"}, 2},
		{"hangs mid-body past the deadline", func(_ int, c net.Conn, br *bufio.Reader) {
			if readReq(br) {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
				readReq(br)
			}
		}, 150 * time.Millisecond, []string{"timeout"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, accepted := scriptServer(t, tt.serve)
			timeout := cmp.Or(tt.timeout, 2*time.Second)
			snd := NewRawSender(timeout)(0)
			defer snd.Close()
			req := &Request{Method: http.MethodGet, URL: u, Header: []byte("Host: " + u.Host + "\r\n")}
			var got []string
			for range tt.want {
				begin := time.Now()
				r := result(snd.Send(req, begin.Add(timeout)))
				// Never before the deadline; after it by what a busy
				// machine takes to run the sender, which has been seen
				// to reach 2 s, and well before the server gives up.
				if took := time.Since(begin); r == "timeout" && (took < timeout*98/100 || took > timeout+10*time.Second) {
					t.Errorf("timed out after %s, timeout %s", took, timeout)
				}
				got = append(got, r)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("sends = %q, want %q", got, tt.want)
			}
			snd.Close()
			if n := accepted.Load(); n != tt.conns {
				t.Errorf("server accepted %d connections, want %d", n, tt.conns)
			}
		})
	}
}

func TestRawSenderTimeoutIsNetError(t *testing.T) {
	u, _ := scriptServer(t, func(_ int, _ net.Conn, br *bufio.Reader) { readReq(br); readReq(br) })
	snd := NewRawSender(time.Second)(0)
	defer snd.Close()
	r := snd.Send(&Request{Method: "GET", URL: u, Header: []byte("Host: x\r\n")}, time.Now().Add(50*time.Millisecond))
	var ne net.Error
	if !errors.As(r.Err, &ne) || !ne.Timeout() {
		t.Fatalf("err = %v, want a net.Error with Timeout()", r.Err)
	}
}

// TestRawRequestBytes pins what goes on the wire for a form POST and a GET.
func TestRawRequestBytes(t *testing.T) {
	got := make(chan string, 2)
	u, _ := scriptServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		for {
			head, err := readHead(br)
			if err != nil {
				return
			}
			if strings.HasPrefix(head, "POST") {
				body := make([]byte, len("grant_type=client_credentials&scope=openid+profile"))
				io.ReadFull(br, body)
				head += string(body)
			}
			got <- head
			io.WriteString(c, `HTTP/1.1 200 OK`+"\r\nContent-Length: 19\r\n\r\n"+`{"access_token":"a"}`[:19])
		}
	})
	u.Path, u.RawQuery = "/oauth/token", "a=b"
	c := &Config{URL: u, Scenario: schema.ScenarioClientCredentials, ClientID: "cid", ClientSecret: "s:1",
		Scope: "openid profile", ClientAuth: AuthBasic, Timeout: time.Second}
	sc := newScenario(c)
	snd := NewRawSender(time.Second)(0)
	defer snd.Close()
	req := &Request{URL: u}
	sc.build(req, "", "")
	snd.Send(req, time.Now().Add(time.Second))
	want := "POST /oauth/token?a=b HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: idpbench-loadstep\r\n" +
		"Accept: application/json\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
		"Authorization: Basic Y2lkOnMlM0Ex\r\nContent-Length: 50\r\n\r\n" +
		"grant_type=client_credentials&scope=openid+profile"
	if g := <-got; g != want {
		t.Errorf("POST on the wire:\n%q\nwant\n%q", g, want)
	}
	c.Scenario, c.Headers = schema.ScenarioDiscovery, []Header{{"X-Run", "r1"}, {"user-agent", "mine"}}
	sc = newScenario(c)
	sc.build(req, "", "")
	snd.Send(req, time.Now().Add(time.Second))
	want = "GET /oauth/token?a=b HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: mine\r\n" +
		"Accept: application/json\r\nX-Run: r1\r\n\r\n"
	if g := <-got; g != want {
		t.Errorf("GET on the wire:\n%q\nwant\n%q", g, want)
	}
}

// readHead reads a request head up to and including the blank line.
func readHead(br *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		b.WriteString(l)
		if l == "\r\n" {
			return b.String(), nil
		}
	}
}

// fastServer answers every read with the same keep-alive response and
// allocates nothing per request, so an allocation count of the client is
// not blurred by the server in the same process.
func fastServer(t testing.TB, resp string) *url.URL {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				buf, out := make([]byte, 4096), []byte(resp)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
					c.Write(out)
				}
			})
		}
	})
	u, _ := url.Parse("http://" + ln.Addr().String() + "/.well-known/openid-configuration")
	return u
}

// iteration is one worker iteration of the discovery scenario on the raw
// engine: build, send, classify, record.
type iteration struct {
	sc  scenario
	snd Sender
	req *Request
	rec *recorder
	out outcome
}

func newIteration(t testing.TB) *iteration {
	doc := `{"issuer":"http://op/","jwks_uri":"http://op/keys","grant_types_supported":["client_credentials"]}`
	u := fastServer(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(doc))+"\r\n\r\n"+doc)
	c := &Config{URL: u, Scenario: schema.ScenarioDiscovery, Timeout: time.Second}
	it := &iteration{sc: newScenario(c), snd: NewRawSender(c.Timeout)(0), req: &Request{URL: u},
		rec: newRecorder(&tallies{}, &liveCount{})}
	t.Cleanup(it.snd.Close)
	return it
}

func (it *iteration) run() {
	now := time.Now()
	it.sc.build(it.req, "", "")
	resp := it.snd.Send(it.req, now.Add(time.Second))
	it.out, _ = classify(resp, time.Since(now), it.sc)
	it.rec.record(0, it.out)
}

func TestRawIterationAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	it := newIteration(t)
	for range 10 { // grow the buffers
		it.run()
	}
	if n := testing.AllocsPerRun(500, it.run); n != 0 || it.out.class != classOK {
		t.Errorf("%v allocations per request (class %d), want 0", n, it.out.class)
	}
}

func BenchmarkRawIteration(b *testing.B) {
	it := newIteration(b)
	b.ReportAllocs()
	for b.Loop() {
		it.run()
	}
	if it.out.class != classOK {
		b.Fatalf("class %d", it.out.class)
	}
}
