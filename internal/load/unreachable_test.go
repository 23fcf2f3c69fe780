package load

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

func TestConnectFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, refused := net.Dial("tcp", addr)
	if refused == nil {
		t.Fatalf("dialling the closed port %s succeeded", addr)
	}
	dial := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	tests := []struct {
		name string
		err  error
		want connectKind
	}{
		{"a dial of a closed port", refused, connectRefused},
		{"net/http's wrapping of it", &url.Error{Op: "Get", URL: "http://" + addr, Err: refused}, connectRefused},
		{"the epoll engine's", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), connectRefused},
		{"reset in the handshake", dial(os.NewSyscallError("connect", syscall.ECONNRESET)), connectReset},
		{"no answer to the handshake", dial(os.ErrDeadlineExceeded), connectTimeout},
		{"no route", dial(os.NewSyscallError("connect", syscall.EHOSTUNREACH)), connectOther},
		{"a name that does not resolve", dial(&net.DNSError{Err: "no such host", Name: "idp.invalid", IsNotFound: true}), connectDNS},
		{"a TLS handshake", &url.Error{Op: "Get", URL: "https://x/", Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}, connectTLS},
		{"reset after the request was written", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, connectNone},
		{"a response cut short", io.ErrUnexpectedEOF, connectNone},
		{"a request timeout", context.DeadlineExceeded, connectNone},
	}
	for _, tt := range tests {
		if got := connectFailure(tt.err); got != tt.want {
			t.Errorf("%s (%v): kind %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
	o, _ := classify(Response{Err: refused}, 0, scenario{})
	var c counts
	c.codes = map[int]int64{}
	c.record(o)
	if o.class != classConnect || c.requests != 0 || c.errors.Total() != 0 || c.connect.Refused != 1 {
		t.Errorf("a refused connect: class %d, %d requests, %d errors, connect %+v: want an attempt, not a request",
			o.class, c.requests, c.errors.Total(), c.connect)
	}
}

func TestBackoff(t *testing.T) {
	b := backoff{max: 100 * time.Millisecond}
	var got []time.Duration
	for range 10 {
		got = append(got, b.wait())
	}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 64, 100, 100, 100}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("waits %v, want 1 ms doubling to 100 ms", got)
		}
	}
	b.reset()
	if d := b.wait(); d != time.Millisecond {
		t.Errorf("after a response the first wait is %s, want 1 ms", d)
	}
}

func TestReachSummary(t *testing.T) {
	launch := time.Now()
	at := func(ms int) time.Time { return launch.Add(time.Duration(ms) * time.Millisecond) }
	var r reach
	r.launch = launch
	r.answered(at(50)) // reachable: nothing to note
	r.failed(at(100))  // warmup: before the window
	r.failed(at(150))  // already unreachable since 100
	r.answered(at(300))
	r.failed(at(700))
	r.answered(at(800))
	r.failed(at(900)) // to the end
	d, lost := r.summary(at(200), at(1000))
	if want := (100 + 100 + 100) * time.Millisecond; d != want {
		t.Errorf("unreachable %s of the window, want %s", d, want)
	}
	if !lost.Equal(at(900)) {
		t.Errorf("lost at %s after launch, want 900 ms", lost.Sub(launch))
	}
	r.answered(at(950))
	if _, lost := r.summary(at(200), at(1000)); !lost.IsZero() {
		t.Errorf("answered again, yet lost at %s", lost.Sub(launch))
	}
}

// killable is an HTTP server that counts the responses it wrote and can be
// killed: its listener and connections closed at once, as when the process
// dies.
type killable struct {
	url    string
	served atomic.Int64
	srv    *http.Server
}

func newKillable(t *testing.T) *killable {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	k := &killable{url: "http://" + ln.Addr().String() + "/"}
	k.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"issuer":"http://op/"}`)
		k.served.Add(1)
	})}
	go k.srv.Serve(ln)
	t.Cleanup(func() { k.srv.Close() })
	return k
}

// TestTargetLost: a target killed in the window. The step is not complete
// but target_lost since about the kill; the refused connects are attempts,
// not requests (the step counts no more requests than the server answered,
// plus those in flight at the kill); each connection backs off, so the
// attempts stay within what the backoff allows instead of a tight loop;
// and the unreachable time runs from the loss to the end.
func TestTargetLost(t *testing.T) {
	modes := []struct {
		name    string
		rate    float64
		engines []string
	}{
		{"closed", 0, engines},
		{"rate", 400, []string{EngineRaw, EngineNetHTTP}}, // rate mode does not run on epoll
	}
	for _, m := range modes {
		rate := m.rate
		for _, engine := range m.engines {
			t.Run(m.name+"/"+engine, func(t *testing.T) {
				k := newKillable(t)
				c := testConfig(t, k.url, schema.ScenarioDiscovery)
				c.Engine, c.Connections, c.Rate = engine, 4, rate
				c.Warmup, c.Duration, c.Interval = 100*time.Millisecond, 1500*time.Millisecond, 250*time.Millisecond
				// The kill is timed from the window's start, as the engine
				// decided it, not from the test's clock: a test stalled
				// between here and the step's launch would otherwise kill
				// in the warmup, before the window.
				ko := &killObserver{after: 500 * time.Millisecond, kill: func() { k.srv.Close() }}
				c.Window = ko
				s := mustRun(t, c)
				kill := ko.killed.Load()
				if kill == nil || !kill.Before(s.End) {
					t.Fatalf("killed at %v, the window %s to %s: want the kill in it", kill, s.Start, s.End)
				}
				if s.Status != schema.StatusTargetLost || s.TargetLostAt == nil {
					t.Fatalf("status %q, target_lost_at %v: want target_lost", s.Status, s.TargetLostAt)
				}
				if s.TargetLostAt.Before(*kill) || s.TargetLostAt.After(s.End) {
					t.Errorf("target lost at %s, killed at %s, window end %s", s.TargetLostAt, kill, s.End)
				}
				if served := k.served.Load(); s.Requests > served+int64(c.Connections) {
					t.Errorf("%d requests counted, the server answered %d (+%d in flight at most)", s.Requests, served, c.Connections)
				}
				ce := s.ConnectErrors
				// A retry in rate mode may run out of time (its request's
				// deadline) while it dials: a connect timeout.
				if ce.Refused < int64(c.Connections) || ce.Total() != ce.Refused+ce.Reset+ce.Timeout {
					t.Errorf("connect errors %+v: want every connection refused", ce)
				}
				// Per connection: the doubling waits up to the interval
				// (1..128 ms: 8), then one per interval to the end of the
				// window and, in rate mode, through the drain (the timeout).
				left := c.Duration + c.Timeout
				bound := int64(c.Connections) * int64(8+2+left/c.Interval)
				if ce.Total() > bound {
					t.Errorf("%d connection attempts failed: want at most %d with backoff", ce.Total(), bound)
				}
				var ivConnect int64
				for _, iv := range s.Intervals {
					ivConnect += iv.ConnectErrors
				}
				if ivConnect != ce.Total() {
					t.Errorf("intervals count %d failed attempts, the step %d", ivConnect, ce.Total())
				}
				// From the loss to the end at least; from the kill at most
				// (responses in flight at the kill may interleave).
				lostFor, sinceKill := s.End.Sub(*s.TargetLostAt).Seconds(), s.End.Sub(*kill).Seconds()
				if s.UnreachableS < lostFor-0.005 || s.UnreachableS > sinceKill+0.005 {
					t.Errorf("unreachable %.3f s of the window; lost for %.3f s, killed %.3f s before the end", s.UnreachableS, lostFor, sinceKill)
				}
				if rate > 0 && (ce.Unsent == 0 || s.Errors.Timeout != 0) {
					t.Errorf("rate mode: %d unsent, %d timeouts: want the requests due while unreachable unsent, not timeouts",
						ce.Unsent, s.Errors.Timeout)
				}
				t.Logf("%d requests (server answered %d), connect %+v, unreachable %.3f s", s.Requests, k.served.Load(), ce, s.UnreachableS)
			})
		}
	}
}

// killObserver kills the target after the window has run for after.
type killObserver struct {
	after  time.Duration
	kill   func()
	killed atomic.Pointer[time.Time]
}

func (o *killObserver) WindowStart(at time.Time) {
	time.AfterFunc(time.Until(at.Add(o.after)), func() {
		now := time.Now()
		o.killed.Store(&now)
		o.kill()
	})
}

func (o *killObserver) StepDrained(context.Context) {}

// TestTargetBack: a target that stops listening for a while and comes
// back on the same port: the step completes, counts the refused attempts
// and how long the target was unreachable, and measures again after.
func TestTargetBack(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		k := newKillable(t)
		addr := k.url[len("http://") : len(k.url)-1]
		c := testConfig(t, k.url, schema.ScenarioDiscovery)
		c.Engine, c.Duration, c.Interval = engine, 1200*time.Millisecond, 100*time.Millisecond
		time.AfterFunc(300*time.Millisecond, func() { k.srv.Close() })
		back := make(chan error, 1)
		time.AfterFunc(600*time.Millisecond, func() {
			ln, err := net.Listen("tcp", addr)
			if err == nil {
				k2 := &http.Server{Handler: k.srv.Handler}
				t.Cleanup(func() { k2.Close() })
				go k2.Serve(ln)
			}
			back <- err
		})
		s := mustRun(t, c)
		if err := <-back; err != nil {
			t.Fatalf("listening on the port again: %v", err)
		}
		if s.Status != schema.StatusComplete || s.TargetLostAt != nil {
			t.Errorf("status %q, target_lost_at %v: want complete", s.Status, s.TargetLostAt)
		}
		if s.ConnectErrors.Refused == 0 || s.UnreachableS <= 0 || s.UnreachableS >= c.Duration.Seconds() {
			t.Errorf("connect errors %+v, unreachable %.3f s: want refused attempts and part of the window", s.ConnectErrors, s.UnreachableS)
		}
		last := s.Intervals[len(s.Intervals)-1]
		if last.Requests == 0 || s.OK == 0 {
			t.Errorf("last interval %d requests, %d ok: want the target measured again", last.Requests, s.OK)
		}
	})
}

// TestTargetLostFlow: an iteration scenario's target killed in the
// window: an iteration whose first request cannot connect sent nothing and
// is a failed attempt, not a failed iteration; the step lost its target.
func TestTargetLostFlow(t *testing.T) {
	f := newFakeCC(t)
	cfg := flowConfig(t, f.srv.URL+"/token", schema.ScenarioClientCredentialsLogin)
	cfg.UserinfoURL = mustURL(t, f.srv.URL+"/userinfo")
	cfg.Duration, cfg.Interval = time.Second, 250*time.Millisecond
	time.AfterFunc(300*time.Millisecond, f.srv.Close)
	s := mustRunFlow(t, cfg)
	if s.Status != schema.StatusTargetLost || s.ConnectErrors.Refused == 0 {
		t.Fatalf("status %q, connect errors %+v: want target_lost with refused attempts", s.Status, s.ConnectErrors)
	}
	// At the kill, at most one iteration per connection was under way.
	if got := s.Errors.Total(); got > int64(cfg.Connections) {
		t.Errorf("%d failed iterations (%+v): want the refused attempts apart, at most %d cut short at the kill",
			got, s.Errors, cfg.Connections)
	}
	if ui := f.userinfo.Load(); s.OK > ui {
		t.Errorf("%d iterations ok, the fake answered %d userinfo requests", s.OK, ui)
	}
}
