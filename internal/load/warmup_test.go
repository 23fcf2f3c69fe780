package load

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// delayServer answers discovery after delay(since), since being the time
// from its first request, and logs when each request arrived. A request
// arrives after it was due, so the log bounds from above how many were due
// at or after any moment.
func delayServer(t *testing.T, delay func(since time.Duration) time.Duration) (string, func() []time.Time) {
	var mu sync.Mutex
	var arrivals []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		mu.Lock()
		arrivals = append(arrivals, now)
		first := arrivals[0]
		mu.Unlock()
		time.Sleep(delay(now.Sub(first)))
		fmt.Fprint(w, `{"issuer":"x"}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []time.Time { mu.Lock(); defer mu.Unlock(); return append([]time.Time(nil), arrivals...) }
}

// adaptiveConfig is a step with an adaptive warmup of 250 ms intervals,
// stable over 3 of them within 25% (noise on a busy machine stays inside
// that; the servers' changes do not).
func adaptiveConfig(t *testing.T, url, engine string, floor, cap time.Duration) *Config {
	c := testConfig(t, url, schema.ScenarioDiscovery)
	c.Engine, c.Duration, c.Interval = engine, 500*time.Millisecond, 250*time.Millisecond
	c.Warmup, c.WarmupMax, c.WarmupStable, c.WarmupTolerance = floor, cap, 3, 25
	return c
}

// warmupEngines are epoll and a goroutine engine.
func warmupEngines() []string {
	if epollAvailable {
		return []string{EngineRaw, EngineEpoll}
	}
	return []string{EngineRaw}
}

// checkWarmupRecord asserts what every adaptive step records: its rule,
// a verdict, one throughput per warmup interval at most, and a window
// whose requests were all due after its start: every one arrived at the
// server after it (1 ms for the step's wall-clock slew).
func checkWarmupRecord(t *testing.T, c *Config, s *schema.Step, arrivals []time.Time) {
	t.Helper()
	if s.WarmupStable != nil {
		t.Logf("warmup %.3f s, stable %v, qps %.0f", s.WarmupS, *s.WarmupStable, s.WarmupQPS)
	}
	want := &schema.WarmupRule{MinS: c.Warmup.Seconds(), MaxS: c.WarmupMax.Seconds(), StableIntervals: 3, TolerancePct: 25, JITMaxPct: c.WarmupJITMax}
	if !reflect.DeepEqual(s.WarmupRule, want) || s.WarmupStable == nil {
		t.Fatalf("warmup_rule %+v, warmup_stable %v: want %+v and a verdict", s.WarmupRule, s.WarmupStable, want)
	}
	if n := len(s.WarmupQPS); n == 0 || float64(n) > s.WarmupS/c.Interval.Seconds()+1e-9 {
		t.Errorf("%d warmup intervals for a warmup of %.3f s", n, s.WarmupS)
	}
	var after int64
	for _, a := range arrivals {
		if !a.Before(s.Start.Add(-time.Millisecond)) {
			after++
		}
	}
	if s.Requests == 0 || s.Requests > after {
		t.Errorf("the window counted %d requests, the server saw %d arrive after its start: want some, none due before it", s.Requests, after)
	}
}

// TestWarmupSettlesAfterChange: a server that warms up for 2 s (its
// answers take 100 ms and 20 ms by turns, 500 ms each, from its first
// request: over any three 250 ms intervals, however they fall, one is a
// 100 ms one) and then answers in 2 ms ends the warmup after the change,
// by stability, long before the cap. A slow machine can only lengthen the
// warmup: it can lower the client's throughput, never raise it above what
// the server's answer time allows, so a 100 ms interval (at most about 20
// qps on 2 connections) stays far below a 20 ms one (100 qps) unless the
// client stalls for most of the latter's 250 ms; a smooth ramp of small
// steps, by contrast, was flattened by a busy client into a stable run
// before the change. On the goroutine engines the send log shows that the
// window counted exactly the requests due in it, interval by interval.
func TestWarmupSettlesAfterChange(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		url, arrivals := delayServer(t, func(since time.Duration) time.Duration {
			switch {
			case since >= 2*time.Second:
				return 2 * time.Millisecond
			case since/(500*time.Millisecond)%2 == 0:
				return 100 * time.Millisecond
			}
			return 20 * time.Millisecond
		})
		c := adaptiveConfig(t, url, engine, 250*time.Millisecond, 15*time.Second)
		var log *sendLog
		if engine != EngineEpoll {
			next := NewRawSender(c.Timeout)
			if engine == EngineNetHTTP {
				next = NewHTTPSender(false)
			}
			log = logSends(c, next)
		}
		s := mustRun(t, c)
		checkWarmupRecord(t, c, s, arrivals())
		if !*s.WarmupStable || s.WarmupS < 2 || s.WarmupS >= c.WarmupMax.Seconds() {
			t.Errorf("warmup %.3f s, stable %v: want stable after the change at 2 s, before the %s cap (qps %v)",
				s.WarmupS, *s.WarmupStable, c.WarmupMax, s.WarmupQPS)
		}
		if q := s.WarmupQPS; q[len(q)-1] < 2*q[0] {
			t.Errorf("warmup qps %v: want the speed-up in the curve", q)
		}
		if log == nil {
			return
		}
		per := []int64{}
		for _, iv := range s.Intervals {
			per = append(per, iv.Requests)
		}
		lo, hi := perInterval(log.records(), s.Start, c.Interval, len(per), func(r sendRecord) time.Time { return r.due })
		if !within(per, lo, hi) {
			t.Errorf("requests per interval %v, the send log by due time %v to %v", per, lo, hi)
		}
	})
}

// TestWarmupCap: a server whose throughput alternates strongly (2 ms and
// 20 ms answers, every two intervals: stable over no three, however the
// intervals fall) runs the warmup to its cap, and the step says so.
func TestWarmupCap(t *testing.T) {
	for _, engine := range warmupEngines() {
		t.Run(engine, func(t *testing.T) {
			url, arrivals := delayServer(t, func(since time.Duration) time.Duration {
				if since/(500*time.Millisecond)%2 == 0 {
					return 2 * time.Millisecond
				}
				return 20 * time.Millisecond
			})
			c := adaptiveConfig(t, url, engine, 250*time.Millisecond, 2*time.Second)
			s := mustRun(t, c)
			checkWarmupRecord(t, c, s, arrivals())
			if *s.WarmupStable || math.Abs(s.WarmupS-2) > 1e-9 {
				t.Errorf("warmup %v s, stable %v: want the 2 s cap, not stable (qps %v)", s.WarmupS, *s.WarmupStable, s.WarmupQPS)
			}
		})
	}
}

// TestWarmupFloor: a server stable from the start still gets the floor.
func TestWarmupFloor(t *testing.T) {
	for _, engine := range warmupEngines() {
		t.Run(engine, func(t *testing.T) {
			url, arrivals := delayServer(t, func(time.Duration) time.Duration { return 2 * time.Millisecond })
			c := adaptiveConfig(t, url, engine, 1500*time.Millisecond, 10*time.Second)
			s := mustRun(t, c)
			checkWarmupRecord(t, c, s, arrivals())
			if !*s.WarmupStable || s.WarmupS < 1.5 || s.WarmupS >= 10 {
				t.Errorf("warmup %.3f s, stable %v: want stable, no shorter than the 1.5 s floor (qps %v)", s.WarmupS, *s.WarmupStable, s.WarmupQPS)
			}
		})
	}
}

// TestWarmupInterrupted: a cancel during an adaptive warmup ends the step
// at once, with no window, the warmup it spent and no verdict; the
// progress line shows the stability count meanwhile.
func TestWarmupInterrupted(t *testing.T) {
	c, _ := fakeConfig(t, 10*time.Millisecond)
	c.Warmup, c.WarmupMax, c.WarmupStable, c.WarmupTolerance = 20*time.Second, 30*time.Second, 3, 5
	c.Interval = 50 * time.Millisecond
	var buf strings.Builder // written by the progress goroutine only; read after Run joined it
	c.Progress = &buf
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	s, err := runOrFail(t, ctx, c)
	took := time.Since(begin)
	if err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, s)
	if s.Status != schema.StatusInterrupted || s.Requests != 0 || s.WarmupStable != nil || s.WarmupS <= 0 || s.WarmupS > took.Seconds() {
		t.Errorf("status %s, requests %d, stable %v, warmup %.3f s of a Run of %s: want interrupted in the warmup, no verdict",
			s.Status, s.Requests, s.WarmupStable, s.WarmupS, took)
	}
	if out := buf.String(); !strings.Contains(out, "loadstep: warmup ") || !strings.Contains(out, "/3)") {
		t.Errorf("progress %q: want the warmup's stability count", out)
	}
}

func TestWarmupValidate(t *testing.T) {
	tests := []struct {
		max  time.Duration
		k    int
		pct  float64
		rate float64
		ramp time.Duration
		want string // "" = valid
	}{
		{0, 0, 0, 0, 0, ""},
		{0, 0, 0, 100, 0, ""},
		{5 * time.Second, 3, 5, 0, 0, ""},
		{-time.Second, 3, 5, 0, 0, "--warmup-max"},
		{time.Second, 3, 5, 0, 0, "--warmup-max"}, // below the 5 s floor
		{5 * time.Second, 3, 5, 100, 0, ""},       // rate mode settles on the corrected latency
		{5 * time.Second, 3, 5, 100, 2 * time.Second, ""},
		{0, 0, 0, 100, 5 * time.Second, ""},
		{0, 0, 0, 100, 6 * time.Second, "--ramp"}, // longer than the warmup
		{0, 0, 0, 0, time.Second, "--ramp"},       // closed loop
		{0, 0, 0, 100, -time.Second, "--ramp"},
		{5 * time.Second, 1, 5, 0, 0, "--warmup-stable"},
		{5 * time.Second, 61, 5, 0, 0, "--warmup-stable"},
		{5 * time.Second, 3, 0, 0, 0, "--warmup-tolerance"},
		{5 * time.Second, 3, 100, 0, 0, "--warmup-tolerance"},
		{5 * time.Second, 3, math.NaN(), 0, 0, "--warmup-tolerance"},
	}
	for _, tt := range tests {
		c := testConfig(t, "http://127.0.0.1:1/", schema.ScenarioDiscovery)
		c.Warmup, c.WarmupMax, c.WarmupStable, c.WarmupTolerance, c.Rate, c.RampUp = 5*time.Second, tt.max, tt.k, tt.pct, tt.rate, tt.ramp
		err := c.Validate()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), tt.want+":")) {
			t.Errorf("max %s k %d pct %v rate %v ramp %s: err %v, want %q", tt.max, tt.k, tt.pct, tt.rate, tt.ramp, err, tt.want)
		}
	}
}

func TestSteady(t *testing.T) {
	tests := []struct {
		q    []float64
		pct  float64
		want bool
	}{
		{[]float64{100, 104, 96}, 5, true},
		{[]float64{100, 106, 94}, 5, false},
		{[]float64{0, 0, 0}, 5, false},
		{[]float64{50, 100, 50, 100}, 40, true},
		{[]float64{50, 100, 50, 100}, 30, false},
	}
	for _, tt := range tests {
		if got := steady(tt.q, tt.pct); got != tt.want {
			t.Errorf("steady(%v, %v) = %v", tt.q, tt.pct, got)
		}
	}
}

// TestStableAt: the decided start is the lead after the decision (so no
// worker can have classed a request due after it by the old start, see
// stableAt), whatever the interval, and never beyond the cap.
func TestStableAt(t *testing.T) {
	tests := []struct {
		interval, at, want time.Duration // want: the start after launch; 0 = left at the cap
	}{
		{time.Second, 3*time.Second + time.Millisecond, 3*time.Second + 101*time.Millisecond},
		{time.Second, 3*time.Second + 600*time.Millisecond, 3*time.Second + 700*time.Millisecond}, // a late decision: no boundary to wait for
		{100 * time.Millisecond, 1001 * time.Millisecond, 1101 * time.Millisecond},
		{10 * time.Millisecond, 1000 * time.Millisecond, 1100 * time.Millisecond},
		{time.Second, 9*time.Second + 900*time.Millisecond, 0}, // the cap comes first
	}
	for _, tt := range tests {
		e := &engine{cfg: &Config{Duration: 2 * time.Second, WarmupMax: 10 * time.Second}, decided: make(chan struct{})}
		e.plan.launch, e.plan.interval = time.Now(), tt.interval
		e.plan.setWindow(e.cfg.WarmupMax, e.cfg.Duration)
		moved := e.stableAt(e.plan.launch.Add(tt.at))
		if moved != (tt.want != 0) {
			t.Errorf("interval %s, decided at %s: stableAt says moved %v", tt.interval, tt.at, moved)
		}
		want := cmp.Or(tt.want, e.cfg.WarmupMax)
		got, end := e.plan.start().Sub(e.plan.launch), e.plan.end().Sub(e.plan.launch)
		if got != want || end != want+e.cfg.Duration {
			t.Errorf("interval %s, decided at %s: window %s to %s, want from %s", tt.interval, tt.at, got, end, want)
		}
		select {
		case <-e.decided:
		default:
			if tt.want != 0 { // left at the cap, the start moved not: settle wakes them at the cap
				t.Errorf("interval %s, decided at %s: the waiting workers were not woken", tt.interval, tt.at)
			}
		}
	}
}
