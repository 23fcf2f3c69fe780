package load

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// rawServer answers every request on a raw TCP connection with reply, then
// closes the connection.
func rawServer(t *testing.T, reply string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				buf := make([]byte, 4096)
				if n, _ := conn.Read(buf); n > 0 {
					conn.Write([]byte(reply))
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// TestErrorClasses: every failure lands in its class. The window is 500 ms,
// so that even a starved, race-instrumented run with 2 subtests in
// parallel sends a request in it (at 200 ms one run in 25 sent none).
func TestErrorClasses(t *testing.T) {
	quit := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-quit:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(quit) }) // runs first: hang.Close waits for its handlers
	status := func(code int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			fmt.Fprint(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	tests := []struct {
		name    string
		url     string
		timeout time.Duration
		class   func(schema.Errors) int64
		codes   bool // responses arrive (status_codes and histogram filled)
	}{
		{"closed mid-body", rawServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"issuer\""), 0,
			func(e schema.Errors) int64 { return e.Socket }, false},
		{"malformed response", rawServer(t, "SSH-2.0-OpenSSH\r\n\r\n"), 0,
			func(e schema.Errors) int64 { return e.Socket }, false},
		{"closed before response", rawServer(t, ""), 0,
			func(e schema.Errors) int64 { return e.Socket }, false},
		{"hangs past timeout", hang.URL, 80 * time.Millisecond,
			func(e schema.Errors) int64 { return e.Timeout }, false},
		{"503", status(503, `{"issuer":"x"}`), 0,
			func(e schema.Errors) int64 { return e.Non2xx }, true},
		{"200 failing check", status(200, `{}`), 0,
			func(e schema.Errors) int64 { return e.Check }, true},
	}
	for _, tt := range tests {
		for _, engine := range engines {
			t.Run(engine+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				c := testConfig(t, tt.url, schema.ScenarioDiscovery)
				c.Engine, c.Duration = engine, 500*time.Millisecond
				if tt.timeout > 0 {
					c.Timeout = tt.timeout
				}
				s := mustRun(t, c)
				if s.Requests == 0 || tt.class(s.Errors) != s.Requests || s.OK != 0 {
					t.Fatalf("requests %d ok %d errors %+v: want every request in this class", s.Requests, s.OK, s.Errors)
				}
				if s.ErrorRate != 1 {
					t.Errorf("error_rate = %v, want 1", s.ErrorRate)
				}
				if got := len(s.StatusCodes) > 0; got != tt.codes {
					t.Errorf("status_codes = %v", s.StatusCodes)
				}
			})
		}
	}
}

// TestTimeoutMidBody: a request that times out with half its body read
// costs that request only: the next response, on a new connection and
// shorter than the body that never came, is read as it is. On a busy
// machine a loopback answer may itself take longer than the timeout, so
// the test wants at least the one timeout and the rest mostly ok: the
// defect it catches made every request after the first timeout time out
// too (all timeouts, no ok).
func TestTimeoutMidBody(t *testing.T) { forEngines(t, testTimeoutMidBody) }

func testTimeoutMidBody(t *testing.T, engine string) {
	const doc = `{"issuer":"http://op/"}`
	var served atomic.Int64
	u, _ := scriptServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		for readReq(br) {
			if served.Add(1) == 1 {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n{\"issuer\"")
				readReq(br) // until the client gives up and closes
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(len(doc))+"\r\n\r\n"+doc)
		}
	})
	c := testConfig(t, u.String(), schema.ScenarioDiscovery)
	c.Engine, c.Connections, c.Timeout, c.Duration = engine, 1, 300*time.Millisecond, 1500*time.Millisecond
	s := mustRun(t, c)
	e := s.Errors
	if e.Timeout < 1 || e.Total() != e.Timeout || s.OK < 2 || s.OK != s.Requests-e.Timeout || e.Timeout*10 > s.Requests {
		t.Errorf("%d requests, %d ok, errors %+v: want the one timeout (a few more on a busy machine), the rest ok", s.Requests, s.OK, e)
	}
}

// TestCountsMatchServer: with no warmup every request the server sees was
// sent in the window, and every one sent is awaited, so the step must agree
// with the server's own counters exactly.
func TestCountsMatchServer(t *testing.T) { forEngines(t, testCountsMatchServer) }

func testCountsMatchServer(t *testing.T, engine string) {
	var seen, failed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1)%10 == 0 {
			failed.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, `{"issuer":"http://op/"}`)
	}))
	t.Cleanup(srv.Close)
	c := testConfig(t, srv.URL, schema.ScenarioDiscovery)
	// A whole second, so that even a starved, race-instrumented run sends the
	// twenty-odd requests that put 500s among the 200s.
	c.Connections, c.Engine, c.Duration = 4, engine, time.Second
	s := mustRun(t, c)
	n, f := seen.Load(), failed.Load()
	if n < 20 {
		t.Fatalf("server saw only %d requests", n)
	}
	want := map[string]int64{"200": n - f, "500": f}
	if s.Requests != n || s.OK != n-f || s.Errors.Non2xx != f || s.Errors.Total() != f ||
		s.StatusCodes["200"] != want["200"] || s.StatusCodes["500"] != want["500"] || len(s.StatusCodes) != 2 {
		t.Errorf("step: requests %d ok %d non2xx %d codes %v; server: %d requests, %d 500s",
			s.Requests, s.OK, s.Errors.Non2xx, s.StatusCodes, n, f)
	}
	if want := float64(f) / float64(n); s.ErrorRate != want {
		t.Errorf("error_rate = %v, want %v", s.ErrorRate, want)
	}
	if want := float64(n) / s.End.Sub(s.Start).Seconds(); s.QPS != want || s.End.Sub(s.Start) != c.Duration {
		t.Errorf("qps %v over %s, want %v over %s", s.QPS, s.End.Sub(s.Start), want, c.Duration)
	}
}

// fakeSender takes a fixed time per request and logs when each was sent.
type fakeSender struct {
	latency time.Duration
	mu      *sync.Mutex
	sends   *[]time.Time
}

func (f fakeSender) Send(_ *Request, deadline time.Time) Response {
	f.mu.Lock()
	*f.sends = append(*f.sends, time.Now())
	f.mu.Unlock()
	select {
	case <-time.After(f.latency):
		return Response{Status: 200, Body: []byte(`{"issuer":"x"}`)}
	case <-time.After(time.Until(deadline)):
		return Response{Err: context.DeadlineExceeded}
	}
}

func (fakeSender) Close() {}

func fakeConfig(t *testing.T, latency time.Duration) (*Config, func() []time.Time) {
	var mu sync.Mutex
	var sends []time.Time
	srv := httptest.NewServer(http.NotFoundHandler()) // only for the pre-flight dial
	t.Cleanup(srv.Close)
	c := testConfig(t, srv.URL, schema.ScenarioDiscovery)
	c.NewSender = func(int) Sender { return fakeSender{latency, &mu, &sends} }
	return c, func() []time.Time { mu.Lock(); defer mu.Unlock(); return append([]time.Time(nil), sends...) }
}

// TestWindowEdges: in a closed loop a request belongs to the window, and
// to its interval, by the time its worker decided to send it: those in
// flight at the end are awaited and counted, none is sent after it, and
// warmup requests are never counted. The send log's intended time is
// that decision time exactly (the deadline less the timeout), so the
// step's counts are judged against it, whenever a busy machine let the
// workers run.
func TestWindowEdges(t *testing.T) {
	t.Run("in-flight at the end are awaited and counted by send interval", func(t *testing.T) {
		// Each worker sends at ~0 ms (interval 0) and ~140 ms (interval 1);
		// the second is in flight at the 200 ms end (done at ~280 ms) and is
		// counted; a third would start after the end and must not. By
		// completion time the intervals would hold [0 2].
		c, sends := fakeConfig(t, 140*time.Millisecond)
		c.Duration, c.Interval = 200*time.Millisecond, 100*time.Millisecond
		log := logSends(c, c.NewSender)
		s := mustRun(t, c)
		returned := time.Now()
		recs := log.records()
		if got := int64(len(recs)); s.Requests != got || len(sends()) != len(recs) || got < int64(c.Connections) {
			t.Fatalf("step counted %d, sender entered %d times and returned %d: want all counted, each awaited, one per connection at least",
				s.Requests, len(sends()), got)
		}
		var inFlight int
		for i, r := range recs {
			// (The step's times are wall clock: 1 ms for its slew.)
			if !r.due.Before(s.End.Add(time.Millisecond)) || r.done.After(returned) {
				t.Errorf("send %d decided %s after the end, returned %s after Run: want decided before the end, awaited",
					i, r.due.Sub(s.End), r.done.Sub(returned))
			}
			if r.done.After(s.End) {
				inFlight++
			}
		}
		// A worker's last request returns after the end, or it would have
		// sent another: the step has some to await.
		if inFlight == 0 {
			t.Errorf("no request in flight at the end, want one per connection")
		}
		per := []int64{}
		for _, iv := range s.Intervals {
			per = append(per, iv.Requests)
		}
		lo, hi := perInterval(recs, s.Start, c.Interval, 2, func(r sendRecord) time.Time { return r.due })
		if !within(per, lo, hi) {
			t.Errorf("requests per interval = %v, the send log by send decision %v to %v", per, lo, hi)
		}
	})
	t.Run("warmup requests are never counted", func(t *testing.T) {
		c, _ := fakeConfig(t, 40*time.Millisecond)
		c.Warmup, c.Duration = 200*time.Millisecond, 200*time.Millisecond
		log := logSends(c, c.NewSender)
		s := mustRun(t, c)
		var warmup int64
		recs := log.records()
		for _, r := range recs {
			if r.due.Before(s.Start) {
				warmup++
			}
		}
		lo, hi := perInterval(recs, s.Start, c.Interval, 2, func(r sendRecord) time.Time { return r.due })
		if s.Requests < lo[0]+lo[1] || s.Requests > hi[0]+hi[1] || warmup == 0 {
			t.Errorf("step counted %d; the send log: %d to %d decided in the window, %d in the warmup (want some)",
				s.Requests, lo[0]+lo[1], hi[0]+hi[1], warmup)
		}
	})
}

// TestInterrupt: a cancel ends the step at once, in the window or in the
// warmup, and the window ends where the cancel came. The warmup and window
// are 10 s: an engine that waits either out returns no earlier, one that
// stops returns after its setup and a drain of 20 ms requests, which a
// starved machine has been seen to stretch to 1 s; half of 10 s holds the
// two apart.
func TestInterrupt(t *testing.T) {
	const long = 10 * time.Second
	tests := []struct {
		name         string
		warmup       time.Duration
		cancelAfter  time.Duration
		wantRequests bool
	}{
		{"mid-window", 0, 150 * time.Millisecond, true},
		{"during warmup", long, 100 * time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := fakeConfig(t, 20*time.Millisecond)
			c.Warmup, c.Duration = tt.warmup, long
			ctx, cancel := context.WithTimeout(context.Background(), tt.cancelAfter)
			defer cancel()
			begin := time.Now()
			s, err := runOrFail(t, ctx, c)
			returned := time.Now()
			if err != nil {
				t.Fatal(err)
			}
			if took := returned.Sub(begin); took > long/2 {
				t.Errorf("Run took %s, cancelled after %s", took, tt.cancelAfter)
			}
			checkConsistent(t, s)
			if s.Status != schema.StatusInterrupted {
				t.Errorf("status = %q", s.Status)
			}
			window := s.End.Sub(s.Start)
			if (s.Requests > 0) != tt.wantRequests {
				t.Errorf("requests %d over %s", s.Requests, window)
			}
			if !tt.wantRequests {
				if window != 0 {
					t.Errorf("interrupted in the warmup, the window lasted %s: want none", window)
				}
				return
			}
			// The window ends after the cancel and before Run returned
			// (the step's times are wall clock: 1 ms for its slew).
			cancelled, _ := ctx.Deadline()
			if s.End.Before(cancelled.Add(-time.Millisecond)) || s.End.After(returned.Add(time.Millisecond)) {
				t.Errorf("window ended %s after Run began, cancelled at %s, returned at %s",
					s.End.Sub(begin), cancelled.Sub(begin), returned.Sub(begin))
			}
			if len(s.Intervals) != int((window+c.Interval-1)/c.Interval) {
				t.Errorf("%d intervals for a %s window", len(s.Intervals), window)
			}
		})
	}
}

func TestUnreachableTarget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := testConfig(t, "http://"+addr+"/", schema.ScenarioDiscovery)
	if _, err := Run(context.Background(), c); err == nil || !strings.HasPrefix(err.Error(), "connecting to "+addr+": ") {
		t.Fatalf("Run = %v, want connecting to %s: ...", err, addr)
	}
}

func TestStepRecord(t *testing.T) { forEngines(t, testStepRecord) }

func testStepRecord(t *testing.T, engine string) {
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		fmt.Fprint(w, `{"issuer":"x"}`)
	}))
	t.Cleanup(srv.Close)
	c := testConfig(t, srv.URL, schema.ScenarioDiscovery)
	c.Engine = engine
	u := *c.URL
	c.URL = &u
	c.URL.User = nil
	c.URL.Path = "/.well-known/openid-configuration"
	want := c.URL.String()
	c.URL.User = urlUser("admin", "hunter2")
	c.Product, c.ProductVersion, c.Labels = "refop", "v3", map[string]string{"run": "r1"}
	s := mustRun(t, c)
	checks := []struct {
		what string
		ok   bool
	}{
		{"schema", s.Schema == schema.StepV1},
		{"target_url without userinfo", s.TargetURL == want},
		{"product", s.Product == "refop" && s.ProductVersion == "v3" && s.Labels["run"] == "r1"},
		{"window", s.DurationS == 0.2 && s.IntervalS == 0.1 && s.TimeoutS == 2 && s.End.Sub(s.Start) == 200*time.Millisecond},
		{"intervals", len(s.Intervals) == 2 && s.Intervals[1].TS == 0.1 && s.Intervals[1].LengthS == 0.1},
		{"status", s.Status == schema.StatusComplete && s.Connections == 2 && s.RateRPS == 0},
		{"driver", s.Driver.GOMAXPROCS > 0 && s.Driver.CPUS > 0 && s.Driver.CPUPct > 0},
		{"host", s.Host.CPUs > 0 && s.Host.Go != "" && s.Host.OS != "" && s.Host.Kernel != ""},
		{"tool_version", s.ToolVersion != ""},
		{"no pool", s.Pool == nil},
		{"qps", s.QPS == float64(s.Requests)/0.2},
		{"userinfo sent as Basic auth", auth.Load() == "Basic YWRtaW46aHVudGVyMg=="},
		{"driver engine", s.Driver.Engine == engine},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("%s: wrong in %+v", ch.what, s)
		}
	}
}

func TestProgressLine(t *testing.T) {
	c, _ := fakeConfig(t, 10*time.Millisecond)
	// 10 redraws in each phase: time for a busy machine to run the
	// drawing goroutine in both.
	c.Warmup, c.Duration, c.Interval = 500*time.Millisecond, 500*time.Millisecond, 50*time.Millisecond
	var buf strings.Builder // written by the progress goroutine only; read after Run joined it
	c.Progress = &buf
	mustRun(t, c)
	out := buf.String()
	for _, want := range []string{"loadstep: warmup ", "loadstep: measure ", "requests ", "errors 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress %q lacks %q", out, want)
		}
	}
	if strings.Contains(out, "\n") || !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("progress %q: want one redrawn line, cleared at the end", out)
	}
}

// TestInterruptDrainsWithinTimeout: on a real engine, requests in flight at
// the interrupt are awaited no longer than the timeout and are counted.
// The server would answer after 30 s and the window lasts as long: a drain
// that waits for the answer, or an engine that sends on, takes that long;
// one that gives up at the 300 ms timeout returns after its setup, which a
// starved machine has been seen to stretch to 1 s. 5 s holds them apart.
func TestInterruptDrainsWithinTimeout(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		}))
		t.Cleanup(hang.Close)
		c := testConfig(t, hang.URL, schema.ScenarioDiscovery)
		c.Engine, c.Duration, c.Timeout = engine, 30*time.Second, 300*time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		begin := time.Now()
		s, err := runOrFail(t, ctx, c)
		took := time.Since(begin)
		if err != nil {
			t.Fatal(err)
		}
		checkConsistent(t, s)
		if took < 250*time.Millisecond || took > 5*time.Second {
			t.Errorf("Run took %s: want the in-flight requests awaited up to the 300ms timeout, no longer", took)
		}
		if s.Status != schema.StatusInterrupted || s.Requests != 2 || s.Errors.Timeout != 2 {
			t.Errorf("status %s, requests %d, timeouts %d: want interrupted, 2 in-flight requests counted as timeouts",
				s.Status, s.Requests, s.Errors.Timeout)
		}
	})
}

// TestPreflightTimeout: the pre-flight dial waits the request timeout, at
// least 2 s (a busy machine's loopback connect) and at most 10 s.
func TestPreflightTimeout(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{150 * time.Millisecond: 2 * time.Second, 5 * time.Second: 5 * time.Second, time.Minute: 10 * time.Second} {
		if got := preflightTimeout(in); got != want {
			t.Errorf("preflightTimeout(%v) = %v, want %v", in, got, want)
		}
	}
}
