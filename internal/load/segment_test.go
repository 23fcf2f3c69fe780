package load

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// TestSegmentShare: the connections split C/N each, the remainder to the
// lowest indexes, and the shares add up to C.
func TestSegmentShare(t *testing.T) {
	if got := []int{(Segment{0, 3}).Share(10), (Segment{1, 3}).Share(10), (Segment{2, 3}).Share(10)}; !slices.Equal(got, []int{4, 3, 3}) {
		t.Errorf("-c 10 over 3 agents: %v, want [4 3 3]", got)
	}
	if got := (Segment{}).Share(7); got != 7 {
		t.Errorf("no segment: share %d of 7, want all", got)
	}
	for total := range 20 {
		for n := 1; n <= 6; n++ {
			sum, lo, hi := 0, total, 0
			for i := range n {
				s := (Segment{i, n}).Share(total)
				sum, lo, hi = sum+s, min(lo, s), max(hi, s)
				if i > 0 && s > (Segment{i - 1, n}).Share(total) {
					t.Errorf("-c %d over %d: agent %d has more than agent %d", total, n, i, i-1)
				}
			}
			if sum != total || hi-lo > 1 {
				t.Errorf("-c %d over %d: shares sum to %d (min %d, max %d), want %d, at most 1 apart", total, n, sum, lo, hi, total)
			}
		}
	}
}

// TestSegmentPool: every credential goes to exactly one agent, agent I
// holding positions I, I+N, ..., with the file lines of the original.
func TestSegmentPool(t *testing.T) {
	for _, size := range []int{1, 2, 3, 7, 10, 31} {
		for n := 1; n <= 5; n++ {
			p := testPool("p.pool")
			for i := range size {
				p.Creds, p.Lines = append(p.Creds, fmt.Sprintf("c%d", i)), append(p.Lines, i+2) // a header on line 1
			}
			owner := map[string]int{}
			for i := range n {
				sl := (Segment{i, n}).Pool(p)
				for j, cred := range sl.Creds {
					if prev, ok := owner[cred]; ok {
						t.Errorf("size %d over %d: %s in agents %d and %d", size, n, cred, prev, i)
					}
					owner[cred] = i
					if want := fmt.Sprintf("c%d", i+j*n); cred != want || sl.Line(j) != i+j*n+2 {
						t.Errorf("size %d, agent %d/%d: credential %d is %s on line %d, want %s on line %d", size, i, n, j, cred, sl.Line(j), want, i+j*n+2)
					}
				}
				if sl.Name != p.Name || sl.Header["kind"] != "test" {
					t.Errorf("slice %s %v: want the pool's name and header", sl.Name, sl.Header)
				}
			}
			if len(owner) != size {
				t.Errorf("size %d over %d: %d credentials covered, want all", size, n, len(owner))
			}
		}
	}
	if p := testPool("x", "a"); (Segment{}).Pool(p) != p || (Segment{}).Pool(nil) != nil {
		t.Error("no segment: want the pool itself")
	}
}

// TestRateScheduleUnion: the N agents' rate schedules, each its slots of
// the one schedule, together are exactly the single schedule of R: the
// same intended times, none twice, none missing.
func TestRateScheduleUnion(t *testing.T) {
	const rate, span = 1000.0, 2 * time.Second
	launch := time.Date(2026, 12, 2, 3, 0, 0, 250_000_000, time.UTC)
	schedule := func(seg Segment) []time.Duration {
		p := plan{launch: launch, rate: rate, seg: seg}
		var out []time.Duration
		for k := int64(0); ; k++ {
			d := p.intended(k).Sub(launch)
			if d >= span {
				return out
			}
			out = append(out, d)
		}
	}
	whole := schedule(Segment{})
	if len(whole) != int(rate*span.Seconds()) {
		t.Fatalf("the single schedule has %d slots in %s, want %d", len(whole), span, int(rate*span.Seconds()))
	}
	for _, n := range []int{1, 2, 3, 7} {
		var union []time.Duration
		for i := range n {
			own := schedule(Segment{i, n})
			if len(own) < len(whole)/n || len(own) > len(whole)/n+1 {
				t.Errorf("agent %d/%d: %d slots, want R/N of %d", i, n, len(own), len(whole))
			}
			union = append(union, own...)
		}
		slices.Sort(union)
		if !slices.Equal(union, whole) {
			t.Errorf("%d agents: the union of their schedules (%d slots) is not the single schedule of %g/s (%d slots)", n, len(union), rate, len(whole))
		}
	}
}

// TestSegmentRateRun: three rate-mode agents with one --start-at, each
// its own Run, send between them exactly the single schedule's intended
// times in the window, and record their share and the whole.
func TestSegmentRateRun(t *testing.T) {
	const rate, agents = 300.0, 3
	// Setup and a late timer get a generous second, then 2 s (one
	// interval) of lateness before an agent refuses.
	startAt := time.Now().Add(time.Second).Round(0) // as parsed: wall clock only
	steps := make([]*schema.Step, agents)
	logs := make([]*sendLog, agents)
	var wg sync.WaitGroup
	for i := range agents {
		c, _ := fakeConfig(t, 0)
		c.Connections, c.Rate, c.Segment, c.StartAt = 6, rate, Segment{i, agents}, startAt
		c.Warmup, c.Duration, c.Interval = 100*time.Millisecond, 400*time.Millisecond, 2*time.Second
		logs[i] = logSends(c, c.NewSender)
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			s, err := runOrFail(t, context.Background(), c)
			if err != nil {
				t.Errorf("agent %d: %v", i, err)
			}
			steps[i] = s
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	var due []time.Duration
	var requests int64
	for i, s := range steps {
		checkConsistent(t, s)
		want := &schema.Segment{Index: i, Of: agents, TotalConnections: 6, TotalRateRPS: rate}
		if *s.Segment != *want || s.Connections != 2 || s.RateRPS != rate/agents {
			t.Errorf("agent %d: segment %+v, c=%d, rate %v: want %+v, c=2, rate %v", i, s.Segment, s.Connections, s.RateRPS, want, rate/agents)
		}
		if !s.Start.Equal(startAt.Add(100 * time.Millisecond)) {
			t.Errorf("agent %d: window starts %s after --start-at, want the 100 ms warmup exactly", i, s.Start.Sub(startAt))
		}
		requests += s.Requests
		for _, r := range logs[i].records() {
			if r.sent.Before(startAt) {
				t.Errorf("agent %d sent %s before --start-at", i, startAt.Sub(r.sent))
			}
			due = append(due, r.due.Sub(startAt).Round(time.Microsecond))
		}
	}
	// The whole step's schedule: slot n at n/300 s, 150 of them in the
	// 500 ms of warmup and window, 120 in the window.
	var want []time.Duration
	for n := range 150 {
		want = append(want, (time.Duration(n) * time.Second / rate).Round(time.Microsecond))
	}
	slices.Sort(due)
	if !slices.Equal(due, want) {
		t.Errorf("the agents sent %d requests due at %v..., want the single schedule's %d at n/%g s", len(due), due[:min(5, len(due))], len(want), rate)
	}
	if requests != 120 {
		t.Errorf("the agents' windows hold %d requests, want the 120 the single schedule intends in 400 ms", requests)
	}
}

// TestSegmentClosedLoopAndPools: a closed-loop agent runs its share of
// the connections and sends only its slice of a consume pool.
func TestSegmentClosedLoopAndPools(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		ts, srv := newTokenServer(t)
		creds := make([]string, 30)
		for i := range creds {
			creds[i] = fmt.Sprintf("t%02d", i)
		}
		c := introspectConfig(t, engine, srv.URL, creds...)
		c.Connections, c.Segment, c.PoolMode, c.Duration = 5, Segment{1, 3}, PoolConsume, 10*time.Second
		s := mustRun(t, c) // the slice runs dry long before the window's end
		if s.Connections != 2 || s.Segment == nil || *s.Segment != (schema.Segment{Index: 1, Of: 3, TotalConnections: 5}) {
			t.Errorf("c=%d segment %+v: want agent 1 of 3's 2 of 5 connections", s.Connections, s.Segment)
		}
		for tok, n := range ts.uses {
			var k int
			fmt.Sscanf(tok, "t%d", &k)
			if k%3 != 1 || n != 1 {
				t.Errorf("token %s used %d times: want only positions 1 mod 3, each once", tok, n)
			}
		}
		if len(ts.uses) != 10 || s.OK != 10 || s.Pool.Size != 10 || s.Pool.Used != 10 {
			t.Errorf("%d tokens used, ok %d, pool %+v: want the slice's 10", len(ts.uses), s.OK, s.Pool)
		}
	})
}

// TestSegmentValidate: a share of no connections, a slice of no
// credentials, and a slice too small for consume are usage errors naming
// the flag and the segment.
func TestSegmentValidate(t *testing.T) {
	tests := []struct {
		name  string
		setup func(c *Config)
		want  string
	}{
		{"no connection for the agent", func(c *Config) { c.Connections, c.Segment = 2, Segment{2, 3} }, "--segment 2/3: -c 2 leaves agent 2 no connection"},
		{"index out of range", func(c *Config) { c.Segment = Segment{3, 3} }, "--segment"},
		{"reuse slice empty", func(c *Config) {
			c.Scenario, c.Connections, c.Segment, c.Pool = schema.ScenarioUserinfo, 3, Segment{2, 3}, testPool("two.pool", "a", "b")
		}, "--pool two.pool: 2 credentials leave segment 2/3 none"},
		{"consume slice below its connections", func(c *Config) {
			c.Scenario, c.Connections, c.Segment, c.PoolMode = schema.ScenarioUserinfo, 6, Segment{0, 2}, PoolConsume
			c.Pool = testPool("four.pool", "a", "b", "c", "d")
		}, "--pool four.pool: 2 credentials (segment 0/2's share of the pool's 4) for 3 connections"},
		{"assertion slice empty", func(c *Config) {
			c.Scenario, c.Connections, c.Segment, c.Pool = schema.ScenarioIntrospect, 2, Segment{1, 2}, testPool("at.pool", "a", "b")
			c.ClientAuth, c.AssertionPool = AuthAssertion, testPool("asr.pool", "x")
		}, "--client-assertion-pool asr.pool: 1 credentials leave segment 1/2 none"},
		{"start-at with an adaptive warmup", func(c *Config) {
			c.StartAt, c.Warmup, c.WarmupMax, c.WarmupStable, c.WarmupTolerance = time.Now().Add(time.Hour), time.Second, 5*time.Second, 3, 5
		}, "--start-at: an adaptive warmup (--warmup-max 5s above --warmup 1s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testConfig(t, "http://127.0.0.1:1/x", schema.ScenarioDiscovery)
			tt.setup(c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate: %v, want a usage error containing %q", err, tt.want)
			}
		})
	}
	c := testConfig(t, "http://127.0.0.1:1/x", schema.ScenarioDiscovery)
	c.StartAt, c.Warmup, c.WarmupMax, c.WarmupStable, c.WarmupTolerance = time.Now().Add(time.Hour), time.Second, time.Second, 3, 5
	if err := c.Validate(); err != nil {
		t.Errorf("--start-at with --warmup-max equal to --warmup (a fixed window): %v, want accepted", err)
	}
}

// TestStartAtLate: an agent more than one interval past --start-at once
// set up refuses to start, saying how late; one in time waits for it and
// records the requested and the actual start.
func TestStartAtLate(t *testing.T) {
	c, sends := fakeConfig(t, 0)
	c.StartAt = time.Now().Add(-3 * time.Second) // the interval is 100 ms
	_, err := Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "late, more than one --interval (100ms)") || !strings.Contains(err.Error(), "--start-at") {
		t.Fatalf("Run: %v, want a refusal saying how late", err)
	}
	if n := len(sends()); n != 0 {
		t.Errorf("a late agent sent %d requests, want none", n)
	}
	c.StartAt = time.Now().Add(300 * time.Millisecond).Round(0) // as parsed: wall clock only
	c.Interval = 2 * time.Second                                // a late timer is no refusal
	s := mustRun(t, c)
	first := slices.MinFunc(sends(), func(a, b time.Time) int { return a.Compare(b) })
	if s.StartAt == nil || !s.StartAt.Equal(c.StartAt) || s.StartedAt == nil || s.StartedAt.Before(c.StartAt) || first.Before(c.StartAt) {
		t.Fatalf("start_at %v started_at %v, first send %s after --start-at: want the requested start, started and sent no earlier", s.StartAt, s.StartedAt, first.Sub(c.StartAt))
	}
	// How late the timer fired is the machine's business; the record
	// must say what the clock said, within the ms a clock read takes.
	if got, want := *s.StartLateMS, float64(s.StartedAt.Sub(*s.StartAt))/1e6; got < 0 || got > 1000 || got-want > 0.001 || want-got > 0.001 {
		t.Errorf("start_late_ms %v, want started_at - start_at = %v", got, want)
	}
	if !s.Start.Equal(c.StartAt) { // no warmup: the window is reckoned from --start-at
		t.Errorf("window start %s after --start-at, want 0", s.Start.Sub(c.StartAt))
	}
}

// TestStartAtInterrupted: a cancel during the wait ends the step at once,
// interrupted and empty.
func TestStartAtInterrupted(t *testing.T) {
	c, sends := fakeConfig(t, 0)
	c.StartAt = time.Now().Add(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	s, err := runOrFail(t, ctx, c)
	if err != nil || s.Status != schema.StatusInterrupted || s.Requests != 0 || len(sends()) != 0 {
		t.Fatalf("err %v, step %+v, %d sent: want an interrupted empty step", err, s, len(sends()))
	}
	if s.StartAt == nil || s.StartedAt != nil || s.StartLateMS != nil {
		t.Errorf("start_at %v started_at %v start_late_ms %v: want the requested start only (it never started)", s.StartAt, s.StartedAt, s.StartLateMS)
	}
}
