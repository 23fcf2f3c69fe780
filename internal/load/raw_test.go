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
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

const ok200 = "HTTP/1.1 200 OK\r\n"

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
