package ladder

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/adapter"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/placement"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/runstate"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// Exit codes of a ladder beyond internal/cli's.
const (
	ExitNA   = 3 // the scenario is N/A for the product (its entry says why)
	ExitLost = 4 // the product stopped answering (STATE/lost says how)
)

// Exit ends a run with a code whose message, if any, is logged already.
type Exit int

func (e Exit) Error() string { return "exit " + strconv.Itoa(int(e)) }

// Env is what a run takes from its surroundings.
type Env struct {
	Stdout, Stderr io.Writer
	Now            func() time.Time // nil: time.Now
	// Interrupt tells a running child (loadstep, the adapter) to stop when
	// the context ends (cli.Command); nil: cli.ForwardInterrupt.
	Interrupt func(*os.Process) error
	// Ask answers what the ladder measures of a scenario, in-process: the
	// product's registry entry (product.Product.Answer), wired in cmd/.
	Ask product.Asker
}

// runner runs one ladder; its fields are run_ladder's variables.
type runner struct {
	Config
	env     Env
	log     cli.Logger
	ad      adapter.Adapter
	dir     string         // RUN_DIR/PRODUCT
	ans     product.Answer // what the ladder measures (Env.Ask)
	health  string         // the discovery endpoint the health check asks
	mode    string         // its loadstep arguments' --pool-mode; "" for none
	version string
	bound   int // at most this many windows
	total   int // the step counter's bound
	n       int // windows gone through
	prev    string
}

// Run runs the ladder c describes on a running product and returns how
// many windows it went through (measured or skipped; the run's step
// counter), 0 with an error. Its errors: Exit (ExitNA, ExitLost,
// cli.ExitInterrupted) once logged, else a failure.
func Run(ctx context.Context, c Config, e Env) (windows int, err error) {
	return runWith(ctx, c, e, func(r *runner) error { return r.run(ctx) })
}

// RunShares measures, on a running product, c's scenario in rate mode at
// each of c.Shares percent of capacityQPS (the cell's capacity), c.ShareWindows
// windows each, on conns connections (run.ShareConnections); then, when a
// share was not sustained (steps.Sustained), it searches down for the highest
// share that is (searchShares), while a window still ends before deadline
// (zero: no deadline). It returns how many windows it went through. Its
// errors are Run's.
func RunShares(ctx context.Context, c Config, e Env, capacityQPS float64, conns int, deadline time.Time) (windows int, err error) {
	return runWith(ctx, c, e, func(r *runner) error { return r.shares(ctx, capacityQPS, conns, deadline) })
}

// runWith runs f on a runner of c and answers as Run does.
func runWith(ctx context.Context, c Config, e Env, f func(*runner) error) (int, error) {
	r := &runner{Config: c, env: e, log: cli.Logger{W: e.Stderr, Tag: "ladder", Now: e.Now},
		dir: filepath.Join(c.RunDir, c.Product)}
	r.ad = adapter.Adapter{Path: c.Adapter, Stderr: e.Stderr, DriverCPUs: c.DriverCPUs, Interrupt: e.Interrupt}
	err := f(r)
	if ctx.Err() != nil && !errors.As(err, new(Exit)) {
		r.log.Printf("interrupted at %s %s", r.Product, r.Scenario)
		return 0, Exit(cli.ExitInterrupted)
	}
	if err != nil {
		return 0, err
	}
	return r.n, nil
}

func (r *runner) shares(ctx context.Context, capacityQPS float64, conns int, deadline time.Time) error {
	if !(capacityQPS > 0) || conns < 1 {
		return fmt.Errorf("%s %s: shares of a capacity of %g/s on %d connections: want both above 0", r.Product, r.Scenario, capacityQPS, conns)
	}
	if err := r.prepare(ctx); err != nil {
		return err
	}
	r.bound = r.Windows()
	r.total = cmp.Or(r.StepTotal, r.bound)
	if err := r.checkHealth(ctx, "before the "+r.Scenario+" windows at shares of its capacity"); err != nil {
		return err
	}
	var judged []shareJudged
	for _, sh := range r.Shares {
		j, err := r.share(ctx, capacityQPS, conns, sh, false)
		if err != nil {
			return err
		}
		judged = append(judged, j)
	}
	return r.searchShares(ctx, capacityQPS, conns, deadline, judged)
}

// shareJudged is a share's windows as the sustain rule judged them.
type shareJudged struct {
	share     int
	sustained bool         // every window sustained
	last      *schema.Step // its last window; nil when unreadable
	why       string       // the first window's verdict that was not sustained
	// failed is why a window measured no latency (steps.ShareNA: errors
	// above the success rule's, a refused connection ...): a share that
	// failed is never the search's answer.
	failed string
}

// share measures (or skips, when complete) the windows at share percent of
// capacityQPS and judges them; search marks a window of the search.
func (r *runner) share(ctx context.Context, capacityQPS float64, conns, sh int, search bool) (shareJudged, error) {
	// The rate to the hundredth of a request a second.
	rate := math.Round(capacityQPS*float64(sh)) / 100
	j := shareJudged{share: sh, sustained: true}
	windows := r.ShareWindows
	if search {
		windows = 1
	}
	for k := 1; k <= windows; k++ {
		w := win{c: conns, round: k, rate: rate, share: sh, durationS: r.ShareDurationS,
			name:   fmt.Sprintf("%d%% of capacity (%s/s on c=%d)", sh, strconv.FormatFloat(rate, 'f', -1, 64), conns),
			where:  fmt.Sprintf("in the %s windows at %d%% of its capacity", r.Scenario, sh),
			out:    SharePath(r.dir, r.Scenario, sh, k),
			labels: []string{"--label", fmt.Sprintf("share=%d", sh)}}
		if search {
			w.name += " (search)"
			w.labels = append(w.labels, "--label", "search=1")
		}
		if windows > 1 {
			w.name += fmt.Sprintf(" #%d/%d", k, windows)
			w.labels = append(w.labels, "--label", fmt.Sprintf("repeat=%d", k))
		}
		if err := r.measure(ctx, w); err != nil {
			return j, err
		}
		st, err := ReadStep(w.out)
		if err != nil {
			return j, err
		}
		j.last = st
		if v := steps.Sustained(st); v.Verdict != schema.SustainYes && j.sustained {
			j.sustained, j.why = false, v.Verdict+": "+v.Why
		}
		if na := steps.ShareNA(st); na != "" && j.failed == "" {
			j.failed = na
		}
	}
	r.log.Printf("%s %s at %d%% of capacity: %s", r.Product, r.Scenario, sh, verdictText(j))
	return j, nil
}

func verdictText(j shareJudged) string {
	switch {
	case j.failed != "":
		return "no latency: " + j.failed
	case j.sustained:
		return "sustained"
	}
	return j.why
}

// searchShares looks, after the shares, for the highest share below the
// lowest one not sustained (hi) that is sustained: each try at 90% of what
// the product completed at the last share not sustained (completed_rps,
// the rate it did keep up), and below it, at most ShareSearch windows, never
// at or below the highest share already sustained (lo: then lo is the
// answer), and only while a window still ends before deadline. The report
// shows, for every share not sustained, the highest sustained share below
// it (docs/design-methodology.md, "Latency at shares of capacity").
func (r *runner) searchShares(ctx context.Context, capacityQPS float64, conns int, deadline time.Time, judged []shareJudged) error {
	hi := -1 // index into judged of the lowest share not sustained
	for i, j := range judged {
		if !j.sustained && (hi < 0 || j.share < judged[hi].share) {
			hi = i
		}
	}
	if hi < 0 {
		return nil
	}
	rec := &schema.Search{Schema: schema.SearchV1, Product: r.Product, Scenario: r.Scenario, Below: judged[hi].share, Tried: []int{}}
	for _, j := range judged {
		if j.sustained && j.failed == "" && j.share < rec.Below {
			rec.Found = max(rec.Found, j.share)
		}
	}
	if err := r.search(ctx, capacityQPS, conns, deadline, judged[hi], rec); err != nil {
		return err
	}
	r.log.Printf("%s %s: the search below %d%% of capacity: %s", r.Product, r.Scenario, rec.Below, rec.Why)
	return WriteSearch(SearchPath(r.dir, r.Scenario), rec)
}

// search measures the search's windows from cur, the lowest share not
// sustained, and fills rec's outcome.
func (r *runner) search(ctx context.Context, capacityQPS float64, conns int, deadline time.Time, cur shareJudged, rec *schema.Search) error {
	if r.ShareSearch == 0 {
		rec.Outcome, rec.Why = schema.SearchNone, "no search (IDPBENCH_SHARE_SEARCH 0)"
		return nil
	}
	for range r.ShareSearch {
		next := NextShare(capacityQPS, cur.share, cur.last)
		switch {
		case next <= 0:
			rec.Outcome, rec.Why = schema.SearchNone, fmt.Sprintf("nothing below %d%% to try (the product completed too little there)", cur.share)
			return nil
		case next <= rec.Found:
			rec.Outcome = schema.SearchBelow
			rec.Why = fmt.Sprintf("%d%% is the highest sustained: the next try, %d%% (90%% of what it completed at %d%%), is not above it", rec.Found, next, cur.share)
			return nil
		case !deadline.IsZero() && r.now().Add(time.Duration(r.WindowCostS())*time.Second).After(deadline):
			rec.Outcome = schema.SearchBudget
			rec.Why = fmt.Sprintf("not searched at %d%%: a window (about %d s) would pass the budget's deadline %s (IDPBENCH_BUDGET_S)", next, r.WindowCostS(), deadline.UTC().Format(time.TimeOnly))
			return nil
		}
		rec.Tried = append(rec.Tried, next)
		j, err := r.share(ctx, capacityQPS, conns, next, true)
		if err != nil {
			return err
		}
		if j.failed != "" {
			rec.Outcome = schema.SearchNone
			rec.Why = fmt.Sprintf("the window at %d%% measured no latency (%s): nothing to search by (tried %s)", next, j.failed, joinInts(rec.Tried, "% "))
			return nil
		}
		if j.sustained {
			rec.Found, rec.Outcome = next, schema.SearchFound
			rec.Why = fmt.Sprintf("sustained at %d%% (tried %s)", next, joinInts(rec.Tried, "% "))
			return nil
		}
		cur = j
	}
	rec.Outcome = schema.SearchExhausted
	rec.Why = fmt.Sprintf("not sustained at %s either, %d windows (IDPBENCH_SHARE_SEARCH)", joinInts(rec.Tried, "%, "), r.ShareSearch)
	return nil
}

// joinInts prints percentages as "64% 51%" (sep "% ") or "64%, 51%".
func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, sep) + "%"
}

// NextShare is the share (whole percent of capacityQPS) a search tries after
// a share not sustained whose last window was last: 90% of the rate the
// product completed there (completed_rps, else the offered rate less the
// queue's growth, rate / (1 + growth)), and at most 90% of that share; 0
// when nothing is left below it.
func NextShare(capacityQPS float64, share int, last *schema.Step) int {
	next := 0.9 * float64(share)
	if last != nil && last.RateRPS > 0 {
		done := last.RateRPS / (1 + max(0, steps.Sustained(last).GrowthMSPerS)/1000)
		if last.CompletedRPS != nil {
			done = *last.CompletedRPS
		}
		next = min(next, 90*done/capacityQPS)
	}
	return max(0, int(math.Floor(next)))
}

func (r *runner) run(ctx context.Context) error {
	if err := r.prepare(ctx); err != nil {
		return err
	}
	var cands []int
	if r.Round > 1 {
		k, err := r.candidates()
		if err != nil {
			return err
		}
		cands = k.Candidates
		if r.BestOnly && k.Best > 0 {
			cands = []int{k.Best}
		}
		r.log.Printf("%s %s round %d repeats c=%s: %s", r.Product, r.Scenario, r.Round, levels(cands), k.CandidatesReason)
	}
	r.bound = Bound(len(r.Ladder), r.Repeats, r.Round, len(cands))
	r.total = cmp.Or(r.StepTotal, r.bound)
	if err := os.Remove(filepath.Join(r.StateDir, "lost")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := r.checkHealth(ctx, "before the "+r.Scenario+" ladder"); err != nil {
		return err
	}
	if r.Round > 1 {
		for _, c := range cands {
			if err := r.window(ctx, c, r.Round); err != nil {
				return err
			}
		}
	} else if err := r.round1(ctx); err != nil {
		return err
	}
	return nil
}

// prepare asks the adapter what the ladder measures and makes its directories.
func (r *runner) prepare(ctx context.Context) error {
	if fi, err := os.Stat(r.Adapter); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("no adapter %s", r.Adapter)
	}
	if fi, err := os.Stat(r.Loadstep); err != nil || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("tool loadstep is not built (%s); run build_tools (scripts/run-comparison.sh does)", r.Loadstep)
	}
	if err := r.ask(ctx); err != nil {
		return err
	}
	r.mode = PoolMode(r.ans.Load)
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	return os.MkdirAll(filepath.Join(r.StateDir, "pools"), 0o755)
}

// ask asks the product's entry what the ladder measures (Env.Ask: the
// endpoint, ExitNA when the scenario is N/A; loadstep's and the metrics'
// arguments, the pool's lifetime) and the adapter the version; from
// Config.Answers when an earlier ladder filled it.
func (r *runner) ask(ctx context.Context) error {
	if a := r.Answers; a != nil && a.filled {
		if a.isNA {
			return Exit(ExitNA)
		}
		r.ans, r.version, r.health = a.Answer, a.Version, a.Health
		return nil
	}
	if r.env.Ask == nil {
		return fmt.Errorf("%s: no answers for its scenarios (ladder.Env.Ask unset)", r.Product)
	}
	var err error
	if r.ans, err = r.env.Ask(r.StateDir, r.Scenario); err != nil {
		if errors.Is(err, product.ErrNA) {
			r.log.Printf("%v", err)
			if r.Answers != nil {
				r.Answers.filled, r.Answers.isNA = true, true
			}
			return Exit(ExitNA)
		}
		return err
	}
	r.health = r.ans.Endpoint
	if r.Scenario != schema.ScenarioDiscovery {
		disc, err := r.env.Ask(r.StateDir, schema.ScenarioDiscovery)
		if err != nil {
			return fmt.Errorf("the health check's discovery endpoint: %w", err)
		}
		r.health = disc.Endpoint
	}
	if r.version, err = r.ad.Version(ctx); err != nil {
		return err
	}
	if r.Answers != nil {
		*r.Answers = Answers{Answer: r.ans, Version: r.version, Health: r.health, filled: true}
	}
	return nil
}

// PoolMode is the value of --pool-mode in loadstep arguments, "" without one.
func PoolMode(args []string) string {
	if i := slices.Index(args, "--pool-mode"); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// round1 measures round 1 up to its knee (every level with FullLadder),
// then, when no round was named, the other windows of each candidate.
func (r *runner) round1(ctx context.Context) error {
	kneePath := KneePath(r.dir, r.Scenario)
	var skipped []int
	var knee *schema.Knee
	if !r.FullLadder {
		// A resumed round 1 that stopped at its knee does not measure what it skipped.
		if k, err := ReadKnee(kneePath); err == nil && !k.FullLadder {
			knee, skipped = k, k.Skipped
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	kc := KneeConfig{Dir: r.dir, Scenario: r.Scenario, Ladder: r.Ladder, NoisePct: DefaultNoisePct, FullLadder: r.FullLadder, Flat: r.KneeFlat}
	for _, c := range r.Ladder {
		if slices.Contains(skipped, c) {
			r.log.Printf("%s %s c=%d: skipped: round 1 stopped at its knee (%s)", r.Product, r.Scenario, c, knee.Reason)
			continue
		}
		if err := r.window(ctx, c, 1); err != nil {
			return err
		}
		kc.At = c
		stop, rec, err := DecideKnee(kc)
		if err != nil {
			return err
		}
		if rec != nil {
			if err := WriteKnee(kneePath, rec); err != nil {
				return err
			}
		}
		if stop {
			r.log.Printf("%s %s: round 1 stops after c=%d: %s", r.Product, r.Scenario, c, rec.Reason)
			break
		}
	}
	if k, err := ReadKnee(kneePath); err == nil && r.FullLadder {
		would := ""
		if k.StoppedAfter > 0 {
			would = fmt.Sprintf("the knee rule would have stopped after c=%d: ", k.StoppedAfter)
		}
		r.log.Printf("%s %s: --full-ladder: %s%s", r.Product, r.Scenario, would, k.Reason)
	}
	if r.Round != 0 || r.Repeats == 1 {
		return nil
	}
	k, err := r.candidates()
	if err != nil {
		return err
	}
	r.log.Printf("%s %s repeats c=%s: %s", r.Product, r.Scenario, levels(k.Candidates), k.CandidatesReason)
	for _, c := range k.Candidates {
		for round := 2; round <= r.Repeats; round++ {
			if err := r.window(ctx, c, round); err != nil {
				return err
			}
		}
	}
	return nil
}

// candidates decides and records the levels later rounds repeat.
func (r *runner) candidates() (*schema.Knee, error) {
	k, err := DecideCandidates(r.dir, r.Scenario)
	if err != nil {
		return nil, err
	}
	return k, WriteKnee(KneePath(r.dir, r.Scenario), k)
}

// levels prints connection counts as the log lines do: space-separated, "(none)" for none.
func levels(cs []int) string {
	if len(cs) == 0 {
		return "(none)"
	}
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, " ")
}

// window measures (or, when its file is complete, skips) window round of
// the level of c connections.
func (r *runner) window(ctx context.Context, c, round int) error {
	w := win{c: c, round: round, name: fmt.Sprintf("c=%d", c), out: StepPath(r.dir, r.Scenario, c, round),
		where: fmt.Sprintf("in the %s ladder at c=%d", r.Scenario, c), durationS: r.DurationS}
	if round <= 1 {
		w.durationS = r.SearchDurationS
	}
	if r.Repeats > 1 {
		w.name, w.labels = fmt.Sprintf("c=%d #%d/%d", c, round, r.Repeats), []string{"--label", fmt.Sprintf("repeat=%d", round)}
	}
	if r.Twin {
		w.name, w.out, w.twin = w.name+" (A/A twin)", TwinPath(r.dir, r.Scenario, c, round), true
	}
	if err := r.measure(ctx, w); err != nil {
		return err
	}
	r.prev = w.out
	return nil
}

// win is one window to measure: a ladder level's (rate 0) or one at a
// share of the capacity.
type win struct {
	twin      bool // the A/A twin of the cell's window in the round (Config.Twin)
	c, round  int
	rate      float64 // requests (iterations) per second; 0: closed loop
	share     int     // percent of the capacity; 0: a ladder window
	durationS int
	name      string   // as logged: "c=8 #2/3"
	where     string   // for the health check's message: "in the S ladder at c=8"
	out       string   // the step file
	labels    []string // loadstep's --label arguments beyond phase and profile
}

// measure measures (or, when its file is complete, skips) window w.
func (r *runner) measure(ctx context.Context, w win) error {
	r.n++
	if Complete(w.out) {
		r.step("%s %s %s: complete, skipped", r.Product, r.Scenario, w.name)
		return nil
	}
	wtext := fmt.Sprintf("%ds", r.WarmupS)
	switch {
	case w.rate > 0:
		wtext = fmt.Sprintf("ramp %ds, %d-%ds", r.ShareRampS, r.ShareWarmupS, max(r.ShareWarmupS, r.ShareWarmupMaxS))
	case r.WarmMostS() > r.WarmupS:
		wtext = fmt.Sprintf("%d-%ds", r.WarmupS, r.WarmMostS())
	}
	r.step("%s %s %s (warmup %s + %ds; at most %d more windows in this ladder)", r.Product, r.Scenario, w.name, wtext, w.durationS, r.bound-r.n)
	// A product that keeps what it issues in memory starts again empty (the
	// adapter's fresh: a no-op for the others), before its pools are minted.
	if r.ans.Fresh {
		if err := r.ad.Fresh(ctx, r.StateDir, r.Scenario); err != nil {
			return fmt.Errorf("%s did not start again before %s %s: %w", r.Product, r.Scenario, w.name, err)
		}
	}
	if err := MintOwn(ctx, r.mintpool(), r.DriverCPUs, r.ans.Before, r.now(), r.log, r.env); err != nil {
		return err
	}
	var pool string
	var poolargs []string
	if r.mode != "" {
		var err error
		if pool, err = r.stepPool(ctx, w); err != nil {
			return err
		}
		poolargs = []string{"--pool", pool}
	}
	args := r.loadstepArgs(w, poolargs)
	code, err := r.loadstep(ctx, args)
	if r.mode != PoolReuse && pool != "" {
		_ = os.Remove(pool)
	}
	switch {
	case err != nil:
		return err
	case code == cli.ExitInterrupted || ctx.Err() != nil:
		r.log.Printf("interrupted at %s %s %s", r.Product, r.Scenario, w.name)
		return Exit(cli.ExitInterrupted)
	case code != 0 && code != cli.ExitTargetLost:
		return fmt.Errorf("loadstep failed at %s %s %s (exit %d)", r.Product, r.Scenario, w.name, code)
	}
	if err := r.checkHealth(ctx, w.where); err != nil {
		return err
	}
	if code == cli.ExitTargetLost {
		// The product answers again, but the step lost it: not a measurement.
		lost := fmt.Sprintf("lost its target %s, then answered again (the step is kept as target_lost; a rerun measures it again)", w.where)
		if err := os.WriteFile(filepath.Join(r.StateDir, "lost"), []byte(lost+"\n"), 0o644); err != nil {
			return err
		}
		r.log.Printf("%s: %s", r.Product, lost)
		return Exit(ExitLost)
	}
	return nil
}

// step logs a window's line with the step counter: "[step N (of at most B)] ...".
func (r *runner) step(format string, a ...any) {
	r.log.Printf("[step %d (of at most %d)] %s", r.StepOffset+r.n, r.total, fmt.Sprintf(format, a...))
}

// loadstepArgs are one window's loadstep arguments.
func (r *runner) loadstepArgs(w win, poolargs []string) []string {
	args := []string{"--url", r.ans.Endpoint, "--scenario", r.Scenario, "-c", strconv.Itoa(w.c)}
	warmup, phase, interval := r.WarmupS, "phase=ladder", "1s"
	if w.twin {
		phase = "phase=" + steps.PhaseTwin
	}
	if w.rate > 0 {
		// Rate mode: the rate ramps up, then the warmup lasts until the
		// corrected latency no longer falls (a queue left by the start
		// has drained), at most the cap.
		args = append(args, "--rate", strconv.FormatFloat(w.rate, 'f', -1, 64), "--ramp", fmt.Sprintf("%ds", r.ShareRampS))
		warmup, phase, interval = r.ShareWarmupS, "phase="+steps.PhaseShare, fmt.Sprintf("%dms", r.ShareIntervalMS)
		if r.ShareWarmupMaxS > r.ShareWarmupS {
			args = append(args, "--warmup-max", fmt.Sprintf("%ds", r.ShareWarmupMaxS), "--warmup-stable", strconv.Itoa(r.ShareStable),
				"--warmup-tolerance", strconv.Itoa(ShareTolerancePct))
		}
	}
	args = append(args, "--warmup", fmt.Sprintf("%ds", warmup), "--jit-pidfile", filepath.Join(r.StateDir, "pids", r.process()+".pid"))
	if w.rate == 0 && r.WarmupMaxS > r.WarmupS {
		args = append(args, "--warmup-max", fmt.Sprintf("%ds", r.WarmupMaxS), "--warmup-stable", strconv.Itoa(r.WarmupStable),
			"--warmup-tolerance", r.TolerancePct, "--warmup-jit-max", strconv.Itoa(r.JITMaxPct))
	}
	args = append(args, "--duration", fmt.Sprintf("%ds", w.durationS), "--interval", interval, "--timeout", "10s",
		"--product", r.Product, "--product-version", r.version,
		"--label", phase, "--label", "profile="+r.Profile)
	args = append(append(append(append(args, w.labels...), r.ans.Load...), poolargs...), r.ans.Metrics...)
	return append(args, "-o", w.out)
}

// loadstep runs loadstep on the driver CPUs and returns its exit code; an
// error only when it could not be run.
func (r *runner) loadstep(ctx context.Context, args []string) (int, error) {
	return RunChild(ctx, r.env.Interrupt, placement.Pinned(r.DriverCPUs, append([]string{r.Loadstep}, args...)...), r.env.Stdout, r.env.Stderr)
}

// RunChild runs argv (interrupted by SIGINT when ctx ends: cli.Command) and
// returns its exit code (cli.ExitInterrupted when a signal ended it); an
// error only when it could not be run.
func RunChild(ctx context.Context, interrupt func(*os.Process) error, argv []string, stdout, stderr io.Writer) (int, error) {
	cmd := cli.Command(ctx, interrupt, argv...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cli.RunCode(cmd)
}

// checkHealth ends the ladder with ExitLost, the reason logged and in
// STATE/lost, when the product no longer runs or answers: its process
// group (STATE/pids/PRODUCT.pid, when it has one) has a live member and its
// discovery endpoint (the entry's answer, asked with the scenario's) answers 200 within 10 s
// (runstate.Health, what the adapter's health checks).
func (r *runner) checkHealth(ctx context.Context, when string) error {
	why := runstate.Health(ctx, runstate.Prober{}, r.StateDir, r.process(), r.health)
	if why == "" || ctx.Err() != nil {
		return nil
	}
	msg := fmt.Sprintf("stopped answering %s: %s", when, why)
	if err := os.WriteFile(filepath.Join(r.StateDir, "lost"), []byte(msg+"\n"), 0o644); err != nil {
		return err
	}
	r.log.Printf("%s: %s", r.Product, msg)
	return Exit(ExitLost)
}

// stepPool mints (or reuses) the pool of one window and returns its path.
func (r *runner) stepPool(ctx context.Context, w win) (string, error) {
	p := PoolSizing{Mode: r.mode, Connections: w.c, WarmupS: float64(r.WarmMostS()), DurationS: float64(w.durationS),
		PerConnQPS: r.PerConnQPS, Cap: r.PoolCap, Reuse: r.ReusePool, RateRPS: w.rate}
	name := fmt.Sprintf("%s-c%d.pool", r.Scenario, w.c)
	if w.rate > 0 {
		p.WarmupS, name = float64(max(r.ShareWarmupS, r.ShareWarmupMaxS)), fmt.Sprintf("%s-share%d.pool", r.Scenario, w.share)
	} else if from := SizingStep(r.prev, r.dir, r.Scenario, w.c, w.round, nonEmpty); from != "" && nonEmpty(from) {
		s, err := ReadStep(from)
		if err != nil {
			return "", err
		}
		p.Prev = s
	}
	size, err := PoolSize(p)
	if err != nil {
		return "", err
	}
	pool := filepath.Join(r.StateDir, "pools", name)
	if r.mode == PoolReuse {
		pool = filepath.Join(r.StateDir, "pools", r.Scenario+".pool")
		if r.reuseFresh(pool, w.durationS) {
			return pool, nil
		}
	}
	r.log.Printf("minting a %s pool of %d for %s %s", r.mode, size, r.Scenario, w.name)
	return pool, MintPool(ctx, r.env, r.ad, r.mintpool(), r.StateDir, r.Scenario, r.ans.Pool, size, pool)
}

// process names the product's process group: STATE/pids/PROCESS.pid.
func (r *runner) process() string { return cmp.Or(r.ans.Process, r.Product) }

// mintpool is the mintpool executable.
func (r *runner) mintpool() string { return Mintpool(r.Loadstep) }

// Mintpool is the mintpool executable beside the loadstep executable
// loadstep (the built tools).
func Mintpool(loadstep string) string { return filepath.Join(filepath.Dir(loadstep), "mintpool") }

// MintPool mints n credentials of scenario's pool into out: by its plan
// (mintpool with the plan's arguments, -n and -o, on ad's driver CPUs, its
// output to env's Stderr), then its record (product.RecordPool); without a
// plan, by the adapter's pools (the generic adapter's TOKEN_COMMAND).
func MintPool(ctx context.Context, env Env, ad adapter.Adapter, mintpool, state, scenario string, plan *product.Pool, n int, out string) error {
	if plan == nil {
		return ad.Pools(ctx, state, scenario, n, out)
	}
	argv := slices.Concat([]string{mintpool}, plan.Args, []string{"-n", strconv.Itoa(n), "-o", out})
	code, err := RunChild(ctx, env.Interrupt, placement.Pinned(ad.DriverCPUs, argv...), env.Stderr, env.Stderr)
	switch {
	case err != nil:
		return err
	case code != 0:
		return fmt.Errorf("minting the %s pool failed (mintpool exit %d)", scenario, code)
	}
	return product.RecordPool(state, schema.PoolInfo{Scenario: scenario, Kind: plan.Kind, Mode: plan.Mode, Size: n, Flow: plan.Flow})
}

// reuseFresh reports whether the reuse pool is there and still serves a window.
func (r *runner) reuseFresh(pool string, durationS int) bool {
	fi, err := os.Stat(pool)
	if err != nil || fi.Size() == 0 {
		return false
	}
	return ReuseFresh(AgeS(fi, r.now()), r.WarmMostS()+durationS, r.ans.TTL, r.ReuseMaxAgeS)
}

// MintOwn mints each of a product's own pools (product.Answer.Before) that
// is missing or at least its MaxAgeS old at now: mintpool (its path), on the
// driver CPUs, its output to env's Stderr.
func MintOwn(ctx context.Context, mintpool, driverCPUs string, own []product.OwnPool, now time.Time, lg cli.Logger, env Env) error {
	for _, p := range own {
		if fi, err := os.Stat(p.Path); err == nil && fi.Size() > 0 && AgeS(fi, now) < p.MaxAgeS {
			continue
		}
		lg.Printf("minting the %s pool (%s)", p.Name, p.Path)
		argv := placement.Pinned(driverCPUs, slices.Concat([]string{mintpool}, p.Args, []string{"-o", p.Path})...)
		code, err := RunChild(ctx, env.Interrupt, argv, env.Stderr, env.Stderr)
		if err != nil {
			return err
		}
		if code != 0 {
			return fmt.Errorf("minting the %s pool failed (mintpool exit %d)", p.Name, code)
		}
	}
	return nil
}

func (r *runner) now() time.Time { return r.env.Time() }

// Time is the env's clock's time (time.Now without a clock).
func (e Env) Time() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// AgeS is the whole seconds since fi's file was modified, as
// $((EPOCHSECONDS - $(stat -c %Y FILE))) counts them.
func AgeS(fi os.FileInfo, now time.Time) int {
	return int(now.Unix() - fi.ModTime().Unix())
}

// Complete reports whether path holds a complete step record: a rerun keeps it.
func Complete(path string) bool {
	s, err := ReadStep(path)
	return err == nil && s.Status == schema.StatusComplete
}

func nonEmpty(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() > 0
}
