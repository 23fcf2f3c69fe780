package ladder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/adapter/adaptertest"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/schema"
)

// fixture is one ladder run against the fake adapter and the fake loadstep.
type fixture struct {
	t                      *testing.T
	runDir, state, argsLog string
	cfg                    Config
	windows                int // the last run's windows (Run)
}

func newFixture(t *testing.T, o Options, env map[string]string) *fixture {
	t.Helper()
	bin, argsLog := fakeBin(t)
	f := &fixture{t: t, runDir: t.TempDir(), state: t.TempDir(), argsLog: argsLog}
	adaptertest.Serve(t, f.state) // the fake product's discovery, which the health check asks
	adapter, err := filepath.Abs("../adapter/testdata/fakeadapter")
	if err != nil {
		t.Fatal(err)
	}
	o.Product, o.RunDir, o.StateDir, o.Adapter, o.Bin = "fake", f.runDir, f.state, adapter, bin
	if o.Scenario == "" {
		o.Scenario = schema.ScenarioDiscovery
	}
	cfg, err := NewConfig(o, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	f.cfg = cfg
	return f
}

// run runs the ladder and returns its error and log; f.windows is how
// many windows it went through.
func (f *fixture) run(ctx context.Context) (error, string) {
	var stderr strings.Builder
	var err error
	f.windows, err = Run(ctx, f.cfg, Env{Stdout: &stderr, Stderr: &stderr, Interrupt: cli.Interrupt, Ask: adaptertest.Ask,
		Now: func() time.Time { return time.Now() }})
	return err, stderr.String()
}

func (f *fixture) file(name string) string {
	b, err := os.ReadFile(filepath.Join(f.state, name))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

func (f *fixture) touch(name, text string) {
	if err := os.WriteFile(filepath.Join(f.state, name), []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// levelsRun are the -c of each loadstep run, with their repeat label.
func levelsRun(runs [][]string) []string {
	var out []string
	for _, a := range runs {
		s := a[slices.Index(a, "-c")+1]
		if i := slices.Index(a, "repeat=2"); i > 0 {
			s += "#2"
		}
		out = append(out, s)
	}
	return out
}

func mustContain(t *testing.T, log string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(log, l) {
			t.Errorf("the log lacks %q:\n%s", l, log)
		}
	}
}

// TestRunStopsAtKneeAndResumes: round 1 stops at its knee (the record
// written as aggregate ladder knee wrote it), the windows counted, the
// arguments of loadstep exactly the script's; a rerun measures nothing.
func TestRunStopsAtKneeAndResumes(t *testing.T) {
	f := newFixture(t, Options{Quick: true, Where: Where{StepOffset: 10, StepTotal: 40}},
		map[string]string{"IDPBENCH_LADDER": "2 4 8 16 32", "FAKE_QPS": ""})
	t.Setenv("FAKE_QPS", "2=100/1,4=200/1.1,8=205/2,16=206/4")
	f.touch("metrics", "--server-metrics\nhttp://127.0.0.1:9/metrics\n")
	err, log := f.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	runs := loadstepRuns(t, f.argsLog)
	if got := levelsRun(runs); !slices.Equal(got, []string{"2", "4", "8", "16"}) {
		t.Errorf("measured c=%v, want 2 4 8 16 (the knee after 16)", got)
	}
	want := []string{"--url", strings.TrimSpace(f.file("base")) + "/discovery", "--scenario", "discovery", "-c", "2",
		"--warmup", "1s", "--jit-pidfile", filepath.Join(f.state, "pids", "fake.pid"),
		"--warmup-max", "5s", "--warmup-stable", "2", "--warmup-tolerance", "10", "--warmup-jit-max", "0",
		"--duration", "3s", "--interval", "1s", "--timeout", "10s", "--product", "fake", "--product-version", "1.2.3",
		"--label", "phase=ladder", "--label", "profile=quick", "--client-id", "bench",
		"--server-metrics", "http://127.0.0.1:9/metrics", "-o", StepPath(filepath.Join(f.runDir, "fake"), "discovery", 2, 1)}
	if !slices.Equal(runs[0], want) {
		t.Errorf("loadstep's arguments:\n got %q\nwant %q", runs[0], want)
	}
	k, err := ReadKnee(KneePath(filepath.Join(f.runDir, "fake"), "discovery"))
	if err != nil || k.StoppedAfter != 16 || !slices.Equal(k.Skipped, []int{32}) {
		t.Errorf("knee record %+v, %v; want stopped after 16, 32 skipped", k, err)
	}
	if f.windows != 4 {
		t.Errorf("windows %d, want 4", f.windows)
	}
	mustContain(t, log,
		" ladder: [step 11 (of at most 40)] fake discovery c=2 (warmup 1-5s + 3s; at most 4 more windows in this ladder)",
		" ladder: [step 14 (of at most 40)] fake discovery c=16 (warmup 1-5s + 3s; at most 1 more windows in this ladder)",
		" ladder: fake discovery: round 1 stops after c=16: c=8 and c=16 added < 5%")
	if calls := f.file("calls"); strings.Count(calls, "fresh discovery\n") != 4 || strings.Count(calls, "health\n") != 5 {
		t.Errorf("adapter calls: want fresh before each of 4 windows, health before the ladder and after each:\n%s", calls)
	}

	err, log = f.run(context.Background())
	if err != nil || len(loadstepRuns(t, f.argsLog)) != 4 {
		t.Fatalf("rerun: %v, %d loadstep runs in all (want 4: nothing measured again)\n%s", err, len(loadstepRuns(t, f.argsLog)), log)
	}
	mustContain(t, log, "[step 11 (of at most 40)] fake discovery c=2: complete, skipped",
		"[step 14 (of at most 40)] fake discovery c=16: complete, skipped", "round 1 stops after c=16")
	if f.windows != 4 {
		t.Errorf("rerun: windows %d, want 4", f.windows)
	}
}

// TestRunRepeats: round 1 to its end, then the candidates' other windows,
// labelled repeat=k; a named round >= 2 repeats only them.
func TestRunRepeats(t *testing.T) {
	f := newFixture(t, Options{Quick: true, Repeats: "3", Round: "1"}, map[string]string{"IDPBENCH_LADDER": "2 4 8"})
	t.Setenv("FAKE_QPS", "2=100/1,4=190/1,8=200/1")
	if err, log := f.run(context.Background()); err != nil {
		t.Fatalf("round 1: %v\n%s", err, log)
	}
	if got := levelsRun(loadstepRuns(t, f.argsLog)); !slices.Equal(got, []string{"2", "4", "8"}) {
		t.Errorf("round 1 measured %v, want 2 4 8", got)
	}
	f.cfg.Round = 2
	err, log := f.run(context.Background())
	if err != nil {
		t.Fatalf("round 2: %v\n%s", err, log)
	}
	runs := loadstepRuns(t, f.argsLog)[3:]
	if got := levelsRun(runs); !slices.Equal(got, []string{"4#2", "8#2"}) {
		t.Errorf("round 2 measured %v, want c=4 (within 10%%) and c=8, repeat=2", got)
	}
	mustContain(t, log, "fake discovery round 2 repeats c=4 8: c=8 has round 1's best qps", "[step 2 (of at most 2)] fake discovery c=8 #2/3 (warmup 1-5s + 2s; at most 0 more windows in this ladder)")
	if f.windows != 2 {
		t.Errorf("windows %d, want 2", f.windows)
	}
	if _, err := os.Stat(StepPath(filepath.Join(f.runDir, "fake"), "discovery", 4, 2)); err != nil {
		t.Errorf("round 2's file: %v", err)
	}
}

// TestRunBestOnlyTwin: an interleaved round (BestOnly) measures round 1's
// best level only, in the rounds' window; its twin (Twin) the same level
// into SCENARIO-c<N>-r<K>-twin.json, labelled phase=twin; with Answers the
// entry is asked once for every ladder of the scenario.
func TestRunBestOnlyTwin(t *testing.T) {
	f := newFixture(t, Options{Quick: true, Repeats: "3", Round: "1"}, map[string]string{"IDPBENCH_LADDER": "2 4 8"})
	t.Setenv("FAKE_QPS", "2=100/1,4=190/1,8=200/1")
	answers := &Answers{}
	f.cfg.Answers = answers
	if err, log := f.run(context.Background()); err != nil {
		t.Fatalf("round 1: %v\n%s", err, log)
	}
	asked := strings.Count(f.file("calls"), "answer ")
	f.cfg.Round, f.cfg.BestOnly = 2, true
	if err, log := f.run(context.Background()); err != nil {
		t.Fatalf("round 2: %v\n%s", err, log)
	}
	f.cfg.Twin = true
	if err, log := f.run(context.Background()); err != nil {
		t.Fatalf("round 2's twin: %v\n%s", err, log)
	}
	runs := loadstepRuns(t, f.argsLog)[3:]
	if got := levelsRun(runs); !slices.Equal(got, []string{"8#2", "8#2"}) {
		t.Errorf("round 2 measured %v, want the best level c=8 twice (the cell, its twin)", got)
	}
	arg := func(a []string, name string) string { return a[slices.Index(a, name)+1] }
	if arg(runs[0], "--duration") != "2s" || !slices.Contains(runs[0], "phase=ladder") || !slices.Contains(runs[1], "phase=twin") ||
		arg(runs[1], "-o") != TwinPath(filepath.Join(f.runDir, "fake"), "discovery", 8, 2) {
		t.Errorf("round 2's windows:\n%q\n%q\nwant 2 s windows, the twin labelled phase=twin in its own file", runs[0], runs[1])
	}
	if n := strings.Count(f.file("calls"), "answer "); n != asked || asked != 1 {
		t.Errorf("the entry asked %d times in round 1, %d in all: want once", asked, n)
	}
}

// TestRunPools: consumed pools sized from the window before and removed
// after the window; a reuse pool minted once while its tokens outlive the
// windows.
func TestRunPools(t *testing.T) {
	f := newFixture(t, Options{Quick: true, Scenario: "refresh"}, map[string]string{"IDPBENCH_LADDER": "2 4"})
	f.touch("poolmode-refresh", "consume\n")
	if err, log := f.run(context.Background()); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	// c=2: 2 * 50 * (5 + 3); c=4 from c=2's 200 qps: ceil(200 * 2 * 1.2 * 8) + 8.
	calls := f.file("calls")
	if !strings.Contains(calls, "pools refresh 800\n") || !strings.Contains(calls, "pools refresh 3848\n") {
		t.Errorf("consume pools: want 800 then 3848:\n%s", calls)
	}
	if left, _ := filepath.Glob(filepath.Join(f.state, "pools", "*")); len(left) != 0 {
		t.Errorf("consumed pools left: %v", left)
	}

	g := newFixture(t, Options{Quick: true, Scenario: "userinfo"}, map[string]string{"IDPBENCH_LADDER": "2 4 8"})
	g.touch("poolmode-userinfo", "reuse\n")
	g.touch("ttl-userinfo", "3600\n")
	err, log := g.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if n := strings.Count(g.file("calls"), "pools userinfo 256\n"); n != 1 {
		t.Errorf("reuse pool minted %d times, want once:\n%s", n, g.file("calls"))
	}
	runs := loadstepRuns(t, g.argsLog)
	pool := filepath.Join(g.state, "pools", "userinfo.pool")
	for _, a := range runs {
		if i := slices.Index(a, "--pool"); i < 0 || a[i+1] != pool {
			t.Errorf("a window without --pool %s: %q", pool, a)
		}
	}
}

func TestReuseFresh(t *testing.T) {
	for _, tt := range []struct {
		age, step, ttl, maxAge int
		want                   bool
	}{
		{0, 13, 0, -1, true},      // no ttl: younger than 120 s
		{119, 13, 0, -1, true},    //
		{120, 13, 0, -1, false},   //
		{500, 13, 3600, -1, true}, // a ttl and no max age: the ttl only
		{3556, 13, 3600, -1, true},
		{3557, 13, 3600, -1, false}, // 3557 + 13 + 30 = 3600, not below it
		{100, 13, 3600, 60, false},  // a max age set caps a ttl's too
		{59, 13, 3600, 60, true},
		{10, 13, 0, 0, false}, // max age 0: never reused
	} {
		if got := ReuseFresh(tt.age, tt.step, tt.ttl, tt.maxAge); got != tt.want {
			t.Errorf("ReuseFresh(age %d, step %d, ttl %d, max age %d) = %v, want %v", tt.age, tt.step, tt.ttl, tt.maxAge, got, tt.want)
		}
	}
}

func TestSizingStep(t *testing.T) {
	have := map[string]bool{"d/s-c8.json": true, "d/s-c8-r2.json": true}
	exists := func(p string) bool { return have[p] }
	for _, tt := range []struct {
		prev     string
		c, round int
		want     string
	}{
		{"d/s-c4.json", 8, 1, "d/s-c4.json"},       // the ladder's previous window
		{"", 8, 1, ""},                             // the first window of round 1
		{"", 8, 2, "d/s-c8.json"},                  // round 2's first: round 1's window
		{"", 8, 3, "d/s-c8-r2.json"},               // round 3's first: round 2's
		{"", 16, 2, ""},                            // no window of the round before
		{"d/s-c4-r2.json", 8, 2, "d/s-c4-r2.json"}, // a previous window in the round
	} {
		if got := SizingStep(tt.prev, "d", "s", tt.c, tt.round, exists); got != tt.want {
			t.Errorf("SizingStep(%q, c=%d, round %d) = %q, want %q", tt.prev, tt.c, tt.round, got, tt.want)
		}
	}
}

// TestRunNAAndLost: an N/A scenario exits 3 measuring nothing; a product
// that stopped answering, or a window that lost it, exits 4 with the
// reason in STATE/lost.
func TestRunNAAndLost(t *testing.T) {
	f := newFixture(t, Options{Quick: true}, nil)
	f.touch("na-discovery", "not here")
	if err, log := f.run(context.Background()); !errors.Is(err, Exit(ExitNA)) || len(loadstepRuns(t, f.argsLog)) != 0 {
		t.Errorf("N/A: %v, %d loadstep runs; want exit 3, none\n%s", err, len(loadstepRuns(t, f.argsLog)), log)
	}

	g := newFixture(t, Options{Quick: true}, nil)
	g.touch("unhealthy", "")
	err, log := g.run(context.Background())
	why := "stopped answering before the discovery ladder: its discovery endpoint " + strings.TrimSpace(g.file("base")) + "/discovery answers 502"
	if !errors.Is(err, Exit(ExitLost)) || g.file("lost") != why+"\n" {
		t.Errorf("unhealthy: %v, lost %q", err, g.file("lost"))
	}
	mustContain(t, log, "ladder: fake: "+why)

	h := newFixture(t, Options{Quick: true}, nil)
	t.Setenv("FAKE_LOST_AT", "8")
	err, _ = h.run(context.Background())
	if !errors.Is(err, Exit(ExitLost)) || !strings.HasPrefix(h.file("lost"), "lost its target in the discovery ladder at c=8, then answered again") {
		t.Errorf("target lost: %v, lost %q", err, h.file("lost"))
	}
	if h.windows != 0 {
		t.Errorf("a lost ladder counted %d windows, want 0", h.windows)
	}
}

// TestRunInterrupted: a cancelled run SIGINTs loadstep, waits for its
// interrupted record and ends with exit 130.
func TestRunInterrupted(t *testing.T) {
	f := newFixture(t, Options{Quick: true}, nil)
	ready := filepath.Join(f.state, "loadstep-ready")
	t.Setenv("FAKE_WAIT", ready)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if _, err := os.Stat(ready); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	err, log := f.run(ctx)
	if !errors.Is(err, Exit(cli.ExitInterrupted)) {
		t.Fatalf("%v, want exit 130\n%s", err, log)
	}
	s, err := ReadStep(StepPath(filepath.Join(f.runDir, "fake"), "discovery", 2, 1))
	if err != nil || s.Status != schema.StatusInterrupted {
		t.Errorf("the window's record: %v, %v; want interrupted", s, err)
	}
	mustContain(t, log, "ladder: interrupted at fake discovery c=2")
}

// TestRunShares: each share's windows run in rate mode at that percent of
// the capacity, on the connections given, with a ramp and a warmup that
// settles on the corrected latency, in the profile's intervals, and the
// labels phase=share, share=P and repeat=k; every share sustained, no
// search; a rerun skips the complete files; a capacity of 0 is refused
// before anything runs.
func TestRunShares(t *testing.T) {
	f := newFixture(t, Options{Quick: true}, map[string]string{"IDPBENCH_SHARES": "50 80", "IDPBENCH_SHARE_WINDOWS": "2"})
	var log strings.Builder
	env := Env{Stdout: &log, Stderr: &log, Interrupt: cli.Interrupt, Ask: adaptertest.Ask}
	n, err := RunShares(context.Background(), f.cfg, env, 1234.5, 16, time.Time{})
	if err != nil || n != 4 {
		t.Fatalf("RunShares = %d, %v; want 4 windows; log:\n%s", n, err, log.String())
	}
	runs := loadstepRuns(t, f.argsLog)
	var got []string
	for _, a := range runs {
		arg := func(name string) string { return a[slices.Index(a, name)+1] }
		got = append(got, strings.Join([]string{arg("--rate"), arg("-c"), arg("--ramp"), arg("--warmup"), arg("--warmup-max"), arg("--interval"), arg("--duration"), filepath.Base(arg("-o"))}, " "))
		for _, l := range []string{"phase=share", "profile=quick"} {
			if !slices.Contains(a, l) {
				t.Errorf("loadstep %q: no label %s", a, l)
			}
		}
	}
	want := []string{"617.25 16 1s 1s 4s 500ms 3s discovery-share50.json", "617.25 16 1s 1s 4s 500ms 3s discovery-share50-r2.json",
		"987.6 16 1s 1s 4s 500ms 3s discovery-share80.json", "987.6 16 1s 1s 4s 500ms 3s discovery-share80-r2.json"}
	if !slices.Equal(got, want) {
		t.Errorf("loadstep runs (rate, c, ramp, warmup, its cap, interval, duration, file):\n%q\nwant\n%q", got, want)
	}
	if !slices.Contains(runs[1], "share=50") || !slices.Contains(runs[1], "repeat=2") || !slices.Contains(runs[2], "share=80") {
		t.Errorf("share and repeat labels: %q, %q", runs[1], runs[2])
	}
	if _, err := os.Stat(SearchPath(filepath.Join(f.runDir, "fake"), "discovery")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a search record (%v) where every share was sustained", err)
	}
	if n, err := RunShares(context.Background(), f.cfg, env, 1234.5, 16, time.Time{}); err != nil || n != 4 || len(loadstepRuns(t, f.argsLog)) != 4 {
		t.Errorf("rerun: %d windows, %v, %d loadstep runs; want 4 windows skipped, no new run", n, err, len(loadstepRuns(t, f.argsLog)))
	}
	if _, err := RunShares(context.Background(), f.cfg, env, 0, 16, time.Time{}); err == nil || !strings.Contains(err.Error(), "want both above 0") {
		t.Errorf("capacity 0: %v, want a refusal", err)
	}
}

// TestShareSearch: a share not sustained starts a search for the highest
// sustained share below it, each try at 90% of what the product completed
// at the last share it did not sustain (and below 90% of that share),
// labelled search=1, one window each; its outcome is recorded. A window
// that measured no latency (every request refused: an expired pool) is
// never the answer, and ends the search.
func TestShareSearch(t *testing.T) {
	tests := []struct {
		name     string
		sustains string // FAKE_SUSTAINS, requests/s (capacity 1000/s)
		fails    string // FAKE_FAILS_UPTO, requests/s
		search   string // IDPBENCH_SHARE_SEARCH
		deadline time.Time
		want     schema.Search
		runs     []string // the search's rates
	}{
		// 80% (800/s) not sustained, 700/s completed: try 63% (630/s), sustained.
		{"found between", "700", "", "2", time.Time{}, schema.Search{Below: 80, Tried: []int{63}, Found: 63, Outcome: schema.SearchFound}, []string{"630"}},
		// 50% and 80% not sustained at 300/s: from 50%, try 27%: found.
		{"found below both", "300", "", "2", time.Time{}, schema.Search{Below: 50, Tried: []int{27}, Found: 27, Outcome: schema.SearchFound}, []string{"270"}},
		// 80% not sustained with 540/s completed: 90% of it is 48.6%, not above 50%.
		{"the lower share is the answer", "540", "", "2", time.Time{}, schema.Search{Below: 80, Tried: []int{}, Found: 50, Outcome: schema.SearchBelow}, nil},
		{"no search", "300", "", "0", time.Time{}, schema.Search{Below: 50, Tried: []int{}, Outcome: schema.SearchNone}, nil},
		{"over the budget", "300", "", "2", time.Unix(1, 0), schema.Search{Below: 50, Tried: []int{}, Outcome: schema.SearchBudget}, nil},
		// 80% not sustained, 50% and the try at 63% answered 401 to every request: 50% is no answer, 63% ends the search.
		{"the windows below measured no latency", "700", "700", "2", time.Time{}, schema.Search{Below: 80, Tried: []int{63}, Outcome: schema.SearchNone}, []string{"630"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Options{Quick: true}, map[string]string{"IDPBENCH_SHARES": "50 80", "IDPBENCH_SHARE_SEARCH": tc.search})
			t.Setenv("FAKE_SUSTAINS", tc.sustains)
			t.Setenv("FAKE_FAILS_UPTO", tc.fails)
			var log strings.Builder
			env := Env{Stdout: &log, Stderr: &log, Interrupt: cli.Interrupt, Ask: adaptertest.Ask}
			if _, err := RunShares(context.Background(), f.cfg, env, 1000, 16, tc.deadline); err != nil {
				t.Fatalf("RunShares: %v; log:\n%s", err, log.String())
			}
			var rates []string
			for _, a := range loadstepRuns(t, f.argsLog)[2:] {
				rates = append(rates, a[slices.Index(a, "--rate")+1])
				if !slices.Contains(a, "search=1") {
					t.Errorf("search window %q: no label search=1", a)
				}
			}
			if !slices.Equal(rates, tc.runs) {
				t.Errorf("search windows at %q/s, want %q", rates, tc.runs)
			}
			b, err := os.ReadFile(SearchPath(filepath.Join(f.runDir, "fake"), "discovery"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := schema.DecodeSearch(strings.NewReader(string(b)), "search")
			if err != nil {
				t.Fatal(err)
			}
			if got.Below != tc.want.Below || got.Found != tc.want.Found || got.Outcome != tc.want.Outcome || !slices.Equal(got.Tried, tc.want.Tried) || got.Why == "" {
				t.Errorf("search record %+v, want below %d, found %d, %s, tried %v, a reason", got, tc.want.Below, tc.want.Found, tc.want.Outcome, tc.want.Tried)
			}
		})
	}
}
