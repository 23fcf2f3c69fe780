package load

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// connServer is a raw TCP server that hands each connection to serve and
// counts the requests serve says it answered, and the connections.
type connServer struct {
	url      string
	requests atomic.Int64
	conns    atomic.Int64
}

// waitRequests waits until the server has counted n requests, for 10 s at
// most, and returns its count.
func (s *connServer) waitRequests(t *testing.T, n int64) int64 {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); s.requests.Load() < n && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return s.requests.Load()
}

func newConnServer(t *testing.T, serve func(s *connServer, conn net.Conn, br *bufio.Reader)) *connServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &connServer{url: "http://" + ln.Addr().String() + "/"}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			wg.Go(func() {
				defer conn.Close()
				serve(s, conn, bufio.NewReader(conn))
			})
		}
	})
	return s
}

// answer serves every request of a connection with the pieces of resp,
// pause apart, and closes the connection after one when once is set.
func answer(pause time.Duration, once bool, resp ...string) func(*connServer, net.Conn, *bufio.Reader) {
	return func(s *connServer, conn net.Conn, br *bufio.Reader) {
		for {
			if err := readRequestHead(br); err != nil {
				return
			}
			for i, piece := range resp {
				if i > 0 {
					time.Sleep(pause)
				}
				if _, err := io.WriteString(conn, piece); err != nil {
					return
				}
			}
			s.requests.Add(1)
			if once {
				return
			}
		}
	}
}

func epollConfig(t *testing.T, url string) *Config {
	c := testConfig(t, url, schema.ScenarioDiscovery)
	c.Engine, c.Duration = EngineEpoll, 300*time.Millisecond
	return c
}

// TestEpollResponses: every framing and connection handling the epoll
// engine meets, each checked against the server's own count: no warmup,
// so every request the server answered was sent in the window and every
// one sent was awaited.
func TestEpollResponses(t *testing.T) {
	const doc = `{"issuer":"http://op/"}`
	head := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	length := head + "Content-Length: " + strconv.Itoa(len(doc)) + "\r\n\r\n"
	chunked := head + "Transfer-Encoding: chunked\r\n\r\n" +
		fmt.Sprintf("%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n", 5, doc[:5], len(doc)-5, doc[5:])
	closing := head + "Connection: close\r\nContent-Length: " + strconv.Itoa(len(doc)) + "\r\n\r\n" + doc
	tests := []struct {
		name       string
		serve      func(*connServer, net.Conn, *bufio.Reader)
		perRequest bool // a new connection for every request
	}{
		{name: "content-length", serve: answer(0, false, length+doc)},
		{name: "chunked", serve: answer(0, false, chunked)},
		{name: "connection close from the server", serve: answer(0, true, closing), perRequest: true},
		{name: "HTTP/1.0 body delimited by the close", serve: answer(0, true, "HTTP/1.0 200 OK\r\n\r\n"+doc), perRequest: true},
		// Each piece arrives in its own epoll wakeup: the head split
		// inside a line, the body split too.
		{name: "partial reads, content-length", serve: answer(2*time.Millisecond, false, length[:20], length[20:]+doc[:7], doc[7:])},
		{name: "partial reads, chunked", serve: answer(2*time.Millisecond, false, chunked[:len(head)+30], chunked[len(head)+30:len(chunked)-4], chunked[len(chunked)-4:])},
		// The server drops the connection after each response without
		// saying so: the next request on it is resent on a new one.
		{name: "idle connection dropped", serve: answer(0, true, length+doc), perRequest: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newConnServer(t, tt.serve)
			c := epollConfig(t, srv.url)
			c.Duration = time.Second // time for a busy machine to send 10, over 100 when idle
			s := mustRun(t, c)
			n := srv.requests.Load()
			if s.Driver.Engine != EngineEpoll || s.Requests < 10 || s.Requests != n || s.OK != n || s.StatusCodes["200"] != n {
				t.Errorf("engine %s: %d requests, %d ok, codes %v, errors %+v; the server answered %d",
					s.Driver.Engine, s.Requests, s.OK, s.StatusCodes, s.Errors, n)
			}
			// +2: the pre-flight dial and resolve's.
			if conns := srv.conns.Load(); tt.perRequest && conns < n || !tt.perRequest && conns != 2+2 {
				t.Errorf("%d connections for %d requests", conns, n)
			}
		})
	}
}

// TestEpollTimeout: a server that never answers: each request times out
// no earlier than its deadline, and is counted as a timeout. The step
// sends the 6 tokens of a consume pool and ends when the pool runs dry (a
// 20 s window bounds it): how many requests a window of fixed length holds
// depends on the CPU the loop gets (a starved test sent none in 400 ms),
// the pool's size does not.
func TestEpollTimeout(t *testing.T) {
	srv := newConnServer(t, func(s *connServer, conn net.Conn, br *bufio.Reader) {
		if readRequestHead(br) != nil {
			return
		}
		s.requests.Add(1)
		io.Copy(io.Discard, br) // hangs until the client closes
	})
	tokens := []string{"t0", "t1", "t2", "t3", "t4", "t5"}
	c := introspectConfig(t, EngineEpoll, srv.url, tokens...)
	c.PoolMode, c.Timeout, c.Duration = PoolConsume, 150*time.Millisecond, 20*time.Second
	begin := time.Now()
	s := mustRun(t, c)
	took := time.Since(begin)
	// Every token was sent and timed out; each connection then found the
	// pool empty, once. The server counts a request once it has read it,
	// which a busy machine may leave until after the step.
	sent := int64(len(tokens))
	n := srv.waitRequests(t, sent)
	if s.Driver.Engine != EngineEpoll || s.Errors.Timeout != sent || n != sent || s.Errors.PoolExhausted != int64(c.Connections) ||
		s.Requests != sent+int64(c.Connections) || s.OK != 0 {
		t.Errorf("engine %s: %d requests, %d ok, errors %+v; the server saw %d: want the %d tokens sent, seen and timed out, and the empty pool once per connection",
			s.Driver.Engine, s.Requests, s.OK, s.Errors, n, sent)
	}
	// The requests of a connection follow each other, and one connection
	// sent at least half of them: none gave up early.
	if perConn := time.Duration((sent+1)/2) * c.Timeout; took < perConn {
		t.Errorf("Run took %s for %d requests in turn on one connection at least, each %s", took, (sent+1)/2, c.Timeout)
	}
}

// TestEpollLargeRequest: a request body bigger than the socket takes at
// once is finished on EPOLLOUT.
func TestEpollLargeRequest(t *testing.T) {
	const size = 4 << 20
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		if n != size {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got.Add(1)
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	c := epollConfig(t, srv.URL)
	c.Scenario, c.Method, c.Body = schema.ScenarioRequest, http.MethodPost, strings.Repeat("x", size)
	s := mustRun(t, c)
	if n := got.Load(); s.Requests == 0 || s.OK != n || s.Requests != n {
		t.Errorf("%d requests, %d ok, errors %+v; the server got %d complete bodies", s.Requests, s.OK, s.Errors, n)
	}
}

// TestEpollAllocatesNothingPerRequest: in the steady state of a step the
// process's heap allocations (loops, recorder, the test server, which
// allocates nothing per request either) do not grow with the requests:
// sampled twice inside the window, fewer than one per 1000 requests.
func TestEpollAllocatesNothingPerRequest(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const doc = `{"issuer":"http://op/"}`
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(doc)) + "\r\n\r\n" + doc)
	srv := newConnServer(t, func(s *connServer, conn net.Conn, _ *bufio.Reader) {
		buf := make([]byte, 4096)
		for {
			if _, err := conn.Read(buf); err != nil { // one request per read: GETs, closed loop
				return
			}
			s.requests.Add(1)
			conn.Write(resp)
		}
	})
	c := epollConfig(t, srv.url)
	c.Duration, c.Interval = time.Second, time.Second
	sample := func() (requests int64, mallocs uint64) {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return srv.requests.Load(), m.Mallocs
	}
	var r1, r2 int64
	var m1, m2 uint64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		time.Sleep(300 * time.Millisecond)
		r1, m1 = sample()
		time.Sleep(500 * time.Millisecond)
		r2, m2 = sample()
	}()
	s := mustRun(t, c)
	<-sampled
	if s.OK != s.Requests || r2-r1 < 1000 {
		t.Fatalf("%d requests, %d ok; %d between the samples", s.Requests, s.OK, r2-r1)
	}
	perRequest := float64(m2-m1) / float64(r2-r1)
	t.Logf("%d allocations in %d requests: %.5f per request", m2-m1, r2-r1, perRequest)
	if perRequest > 0.001 {
		t.Errorf("%.4f allocations per request, want none", perRequest)
	}
}

// TestEpollFallback: where the epoll engine does not apply the step says
// which engine ran instead.
func TestEpollFallback(t *testing.T) {
	srv := newConnServer(t, answer(0, false, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"))
	c := epollConfig(t, srv.url)
	c.Rate = 100
	if _, name := c.sender(); name != EngineRaw {
		t.Errorf("--rate: engine %s, want raw", name)
	}
	c = epollConfig(t, "https://127.0.0.1:1/")
	if _, name := c.sender(); name != EngineNetHTTP {
		t.Errorf("https: engine %s, want nethttp", name)
	}
	c = epollConfig(t, srv.url)
	if _, name := c.sender(); name != EngineEpoll {
		t.Errorf("closed loop over http: engine %s, want epoll", name)
	}
}
