// Package run is the whole comparison (cmd/run, behind
// scripts/run-comparison.sh): one shared PostgreSQL, then the products
// round by round -- install, cold starts A and B, setup, every scenario's
// ladder (internal/ladder) in each round, the GC-jitter run
// (internal/gcjitter), meta, down -- then RUN_DIR/COMPARISON.md and
// results/latest. It orders, resumes, isolates failures and writes the
// records; the adapters (products/<name>/adapter) and the PostgreSQL
// library (scripts/lib/postgres.sh) start and stop the processes.
// docs/design-reference.md#the-scripts and docs/design-methodology.md.
package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/placement"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/runstate"
)

// Env is what a run takes from its surroundings.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Setenv         func(k, v string) error // the variables every child inherits
	Unsetenv       func(string) error
	Now            func() time.Time
	Started        time.Time // when the session began (the wrapper that built the tools)
	Pid            int       // the session's process: the run state's owner
	Registry       Registry  // the products, wired by cmd/run (products)
}

// Registry is what the run knows of the products beside their adapters:
// cmd/run wires the registry's (package products), tests stand-ins of their
// own; nothing under internal/ imports products/ (TestInternalImportsNoProduct).
type Registry struct {
	Default []string // the products of a run without --only
	Names   []string // the products registered (KnownProducts adds the tree's adapters)
	Lookup  Lookup   // a product's entry; nil: none has one
}

// errInterrupted ends the run with exit 130.
var errInterrupted = errors.New("interrupted")

// errProductFailed is a product that failed; its meta says why.
var errProductFailed = errors.New("product failed")

// runner is one session of a run.
type runner struct {
	Options
	env       Env
	log       cli.Logger
	place     placement.Placement
	root, bin string
	results   string
	runDir    string
	work      string // the run state, "" until claimed
	pgDir     string // the shared PostgreSQL's directory while it may run
	session   string
	sessStart string // the first phase's start ("" once it began)
	step      int
	stepTotal int
	ups       []up            // the products that are up, in the order they came up
	out       map[string]bool // products out of the later rounds
	start     map[string]string
	ladderS   map[string]float64         // each product's ladders' seconds in this session (the budget's cost per window)
	ladderN   map[string]int             // and their windows
	rounds    map[string]int             // the last round each product was measured in (its meta's rounds)
	closed    map[string]bool            // products whose last round is done
	samplers  map[string]*sampler        // each product's running sampler
	answers   map[string]*ladder.Answers // what each product's adapter answered for a scenario ("p/s")
	roundS    float64                    // the interleaved rounds' seconds so far
	roundN    int                        // and their windows
	failed    bool
	failures  []string // "product: why" of every failure, the run's last lines
	lookup    func(string) (product.Product, bool)
}

type up struct{ product, state string }

// Lookup finds a product's registry entry: what it declares N/A by design
// (product.Product.NAByDesign).
type Lookup func(name string) (product.Product, bool)

// Main runs the comparison with args; it returns the exit code.
func Main(ctx context.Context, args []string, e Env) int {
	r := &runner{env: e, log: cli.Logger{W: e.Stderr, Tag: "run", Now: e.Now}, out: map[string]bool{}, start: map[string]string{}, ladderS: map[string]float64{}, ladderN: map[string]int{}, rounds: map[string]int{}, closed: map[string]bool{}, samplers: map[string]*sampler{}, answers: map[string]*ladder.Answers{}}
	r.lookup = e.Registry.Lookup
	if r.lookup == nil {
		r.lookup = func(string) (product.Product, bool) { return product.Product{}, false }
	}
	o, err := Parse(args, e.Getenv, e.Now())
	var u usageError
	switch {
	case errors.Is(err, errHelp):
		fmt.Fprint(e.Stdout, Help(e.Registry.Default))
		return cli.ExitOK
	case errors.Is(err, errVersion):
		fmt.Fprintf(e.Stdout, "run %s\n", cli.Version())
		return cli.ExitOK
	case errors.As(err, &u):
		return r.usage(u.Msg)
	}
	if o.Products == nil {
		o.Products = e.Registry.Default
	}
	r.Options = o
	// This session's id and start: its phases are its own.
	r.session = e.Started.UTC().Format("20060102T150405Z") + "-" + strconv.Itoa(e.Pid)
	r.sessStart = e.Started.UTC().Format("2006-01-02T15:04:05.000Z")
	code := r.prepare()
	if code == 0 {
		code = r.preflightOIDC(ctx)
	}
	if code != 0 {
		return code
	}
	if err := r.claim(); err != nil {
		r.log.Printf("error: %v", err)
		return cli.ExitRuntime
	}
	err = r.run(ctx)
	code = cli.ExitOK
	switch {
	case ctx.Err() != nil || errors.Is(err, errInterrupted):
		code = cli.ExitInterrupted
	case err != nil:
		if !errors.Is(err, errProductFailed) {
			r.log.Printf("error: %v", err)
		}
		code = cli.ExitRuntime
	}
	return r.cleanup(code)
}

// prepare checks what the run needs, resolves the placement and sets the
// variables every child inherits; non-zero: the exit code.
func (r *runner) prepare() int {
	r.env.Setenv("IDPBENCH_LOG_TAG", "run")
	for _, kv := range r.Env {
		k, v, _ := strings.Cut(kv, "=")
		r.env.Setenv(k, v)
	}
	for _, c := range []string{"jq", "curl"} {
		if _, err := lookPath(c); err != nil {
			r.log.Printf("error: required command not found: %s", c)
			return cli.ExitRuntime
		}
	}
	r.root, r.bin = r.env.Getenv("IDPBENCH_ROOT"), r.env.Getenv("IDPBENCH_BIN")
	if r.root == "" || r.bin == "" {
		r.log.Printf("error: IDPBENCH_ROOT and IDPBENCH_BIN are not set: run scripts/run-comparison.sh")
		return cli.ExitRuntime
	}
	var u usageError
	if err := checkProducts(r.Products, KnownProducts(r.env.Registry.Names, r.root)); errors.As(err, &u) {
		return r.usage(u.Msg)
	}
	allowed, err := placement.Allowed()
	if err != nil {
		r.log.Printf("error: %v", err)
		return cli.ExitRuntime
	}
	if r.place, err = placement.Resolve(placement.FromEnv(r.env.Getenv), allowed); err != nil {
		return r.usage(err.Error())
	}
	for _, kv := range placement.Env(r.place) {
		k, v, _ := strings.Cut(kv, "=")
		r.env.Setenv(k, v)
	}
	if r.place.Mode == "shared" {
		r.log.Printf("placement: shared: %s", r.place.Reason)
	} else {
		r.log.Printf("placement: load generator and measurement tools on CPUs %s, product and PostgreSQL on CPUs %s", r.place.Driver, r.place.Server)
	}
	// Only the cluster this session starts is ever stopped (cleanup).
	r.env.Unsetenv("IDPBENCH_PG_DIR")
	r.results = cmpOr(r.env.Getenv("IDPBENCH_RESULTS"), filepath.Join(r.root, "results"))
	if err := os.MkdirAll(r.results, 0o755); err != nil {
		r.log.Printf("error: %v", err)
		return cli.ExitRuntime
	}
	if abs, err := filepath.Abs(r.results); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			r.results = real
		}
	}
	r.runDir = filepath.Join(r.results, r.RunID)
	r.env.Setenv("RUN_DIR", r.runDir)
	r.stepTotal = StepTotal(len(r.Products), len(r.Scenarios), r.LadderLen, r.MaxRounds(), r.Shares.Windows())
	r.log.Printf("%s", r.Plan())
	return 0
}

// usage logs a bad command line and the hint at the script's --help; it
// returns exit 2.
func (r *runner) usage(msg string) int {
	r.log.Printf("error: %s", msg)
	fmt.Fprintln(r.env.Stderr, cli.Hint(HelpName))
	return cli.ExitUsage
}

// preflightOIDC checks the generic adapter's configuration before anything
// is installed, when the run measures it (provision oidc check: every
// problem of the file at its line, else the IdP's discovery document and
// the plan, logged): a bad file is exit 2, an IdP that does not answer exit
// 1, at once rather than after the other products' hour. Its install runs
// the same check again.
func (r *runner) preflightOIDC(ctx context.Context) int {
	if !slices.Contains(r.Products, "oidc") {
		return 0
	}
	cfg := cmpOr(r.env.Getenv("IDPBENCH_OIDC_CONFIG"), filepath.Join(r.root, "examples", "oidc", "refop.env"))
	r.log.Printf("preflight: the generic adapter's configuration %s (provision oidc check)", cfg)
	code, err := r.child(ctx, r.env.Stderr, nil, filepath.Join(r.bin, "provision"), "oidc", "check", "--config", cfg)
	switch {
	case ctx.Err() != nil || code == cli.ExitInterrupted:
		return cli.ExitInterrupted
	case err != nil:
		r.log.Printf("error: preflight: %v", err)
		return cli.ExitRuntime
	case code == cli.ExitUsage:
		return r.usage(fmt.Sprintf("IDPBENCH_OIDC_CONFIG=%s: the configuration has problems (each above, at its line); nothing was installed", cfg))
	case code != 0:
		r.log.Printf("error: preflight: the IdP of %s did not answer (above; exit %d): nothing was installed", cfg, code)
		return cli.ExitRuntime
	}
	return 0
}

// fail records a failure of product p, for the summary that ends the run
// (its exit 1).
func (r *runner) fail(p, why string) {
	r.failed = true
	r.failures = append(r.failures, p+": "+why)
}

// claim takes the run state for this session and clears what an earlier
// one left.
func (r *runner) claim() error {
	tmp := cmpOr(r.env.Getenv("IDPBENCH_TMP"), cmpOr(r.env.Getenv("TMPDIR"), "/tmp"))
	state := StateDir(tmp, r.RunID, r.runDir)
	say := func(s string) { fmt.Fprintf(r.env.Stderr, "runstate: %s\n", s) }
	if err := runstate.Claim(state, r.env.Pid, say); err != nil {
		return err
	}
	r.work = state
	return nil
}

// downLeftCompose: a product an earlier session left up in compose mode
// (killed, say, with kill -9) left containers, which outlive their killed
// compose client, on an engine that may be the user's. Its adapter's down
// (compose down -v, then the check that nothing is left) runs on the state
// that names them, before Clean removes it. A failure is a warning: Clean
// still stops what the pidfiles name.
func (r *runner) downLeftCompose(ctx context.Context) {
	entries, err := os.ReadDir(r.work)
	if err != nil {
		return
	}
	for _, e := range entries {
		state := filepath.Join(r.work, e.Name())
		b, err := os.ReadFile(filepath.Join(state, "state.env"))
		if !e.IsDir() || err != nil || !slices.Contains(strings.Split(string(b), "\n"), "MODE=compose") {
			continue
		}
		if _, err := os.Stat(r.adapter(e.Name())); err != nil {
			continue
		}
		r.log.Printf("an earlier session left %s up in compose mode: its containers down first", e.Name())
		if c, err := r.child(context.WithoutCancel(ctx), nil, nil, r.adapter(e.Name()), "down", state); err != nil || c != 0 {
			r.log.Printf("warning: %s: down of the earlier session's containers failed (exit %d, %v); see above", e.Name(), c, err)
		}
	}
}

// say writes runstate's "cleaned: ..." lines.
func (r *runner) say(s string) { fmt.Fprintf(r.env.Stderr, "runstate: cleaned: %s\n", s) }

func (r *runner) run(ctx context.Context) error {
	r.downLeftCompose(ctx)
	if err := runstate.Clean(r.work, r.runDir, r.say); err != nil {
		return err
	}
	for _, d := range []string{"pids", "tmp"} {
		if err := os.MkdirAll(filepath.Join(r.work, d), 0o755); err != nil {
			return err
		}
	}
	// Every scratch directory of the run's tools and adapters lives in its state.
	tmpParent := cmpOr(r.env.Getenv("IDPBENCH_TMP"), cmpOr(r.env.Getenv("TMPDIR"), "/tmp"))
	r.env.Setenv("IDPBENCH_TMP", filepath.Join(r.work, "tmp"))
	if _, err := os.Stat(r.runDir); r.Fresh && err == nil {
		r.log.Printf("--fresh: deleting %s", r.runDir)
		if err := os.RemoveAll(r.runDir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(r.runDir, 0o755); err != nil {
		return err
	}
	// The build (the wrapper's) is the session's first phase: it began when the session did.
	if r.env.Getenv("IDPBENCH_NO_BUILD") == "" {
		r.phase("build", "", "build tools")
	}
	r.phase("database", "", "PostgreSQL up")
	if err := r.pgUp(ctx, tmpParent); err != nil {
		return err
	}
	r.startHostSampler()
	// Round 1, product after product: each opened (install, cold starts,
	// setup) and its levels searched (every scenario's ladder), then left
	// up. Then the interleaved rounds, every product up: in each, every
	// cell one window at its level, scenario by scenario, the products of
	// a scenario side by side in a drawn order, as many rounds as the
	// budget holds (interleave). Then each product's closing: its windows
	// at shares of capacity, GC-jitter run, meta and down (docs/design-methodology.md,
	// "The schedule"). With one round (--repeats 1) each product closes
	// right after its search.
	last := r.MaxRounds() == 1
	for _, p := range r.Products {
		t0 := r.env.Now()
		if err := r.runProduct(ctx, p, r.Scenarios, last); r.failedOrInterrupted(ctx, p, err) {
			return errInterrupted
		}
		r.closed[p] = last
		r.log.Printf("%s: round 1 done in %d s", p, int(r.env.Now().Sub(t0).Seconds()))
	}
	if !last {
		if err := r.interleave(ctx); err != nil {
			return err
		}
		for _, p := range r.Products {
			if r.out[p] || r.closed[p] {
				continue
			}
			t0 := r.env.Now()
			if err := r.closeProduct(ctx, p); r.failedOrInterrupted(ctx, p, err) {
				return errInterrupted
			}
			r.closed[p] = true
			r.log.Printf("%s: closed in %d s", p, int(r.env.Now().Sub(t0).Seconds()))
		}
	}
	r.phase("database", "", "PostgreSQL down")
	if err := r.pgDown(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	r.phase("report", "", "aggregate report")
	if code, err := r.child(ctx, nil, nil, filepath.Join(r.bin, "aggregate"), "report", r.runDir, "-o", filepath.Join(r.runDir, "COMPARISON.md")); err != nil || code != 0 {
		return cmpErr(err, fmt.Errorf("aggregate report failed (exit %d)", code))
	}
	if err := symlink(r.RunID, filepath.Join(r.results, "latest")); err != nil {
		return err
	}
	r.log.Printf("report: %s (results/latest -> %s); run took %d s", filepath.Join(r.runDir, "COMPARISON.md"), r.RunID, int(r.env.Now().Sub(r.env.Started).Seconds()))
	if r.failed {
		r.log.Printf("%d failure(s) of the products asked for; each is a row with its reason (its meta.json):", len(r.failures))
		for _, f := range r.failures {
			r.log.Printf("  failed: %s", f)
		}
		return errProductFailed
	}
	return nil
}

// Plan is the line a run says before it installs anything: what it will
// do and where the results go.
func (r *runner) Plan() string {
	budget := "none"
	if r.BudgetS > 0 {
		budget = fmt.Sprintf("%d s", r.BudgetS)
	}
	return fmt.Sprintf("run %s, %s profile: products %s; scenarios %s; at most %d rounds (round 1 included), budget %s; at most %d load steps; results in %s",
		r.RunID, r.Profile, strings.Join(r.Products, " "), strings.Join(r.Scenarios, " "), r.MaxRounds(), budget, r.stepTotal, r.runDir)
}

// failedOrInterrupted handles what a product's round or closing returned:
// true when the run was interrupted; a failure is the product's, its meta
// and down done here when it did not do them.
func (r *runner) failedOrInterrupted(ctx context.Context, p string, err error) bool {
	if ctx.Err() != nil || errors.Is(err, errInterrupted) {
		return true
	}
	if err != nil {
		r.failed = true
		if !errors.Is(err, errProductFailed) {
			r.log.Printf("%s: error: %v", p, err)
			r.fail(p, err.Error())
		}
		r.afterFailure(ctx, p, 1)
	}
	return false
}

// cleanup ends the session on every path: the running phase, the sampler,
// every product that is up, PostgreSQL, what the run recorded; then it
// releases the run state. It returns code.
func (r *runner) cleanup(code int) int {
	ctx := context.Background()
	p := ""
	if len(r.ups) > 0 {
		p = r.ups[0].product
	}
	// The phase that ran (an interrupted one too) ends here; cleanup is the last.
	if fi, err := os.Stat(filepath.Join(r.work, "phase")); err == nil && fi.Size() > 0 {
		r.phase("teardown", p, fmt.Sprintf("cleanup (exit %d)", code))
	}
	r.stopSamplers()
	for _, u := range r.ups {
		r.log.Printf("cleanup: stopping %s", u.product)
		if c, err := r.child(ctx, nil, nil, r.adapter(u.product), "down", u.state); err != nil || c != 0 {
			r.log.Printf("warning: %s: down during cleanup failed", u.product)
		}
	}
	if r.pgDir != "" {
		if err := r.pgDown(ctx); err != nil {
			r.log.Printf("warning: PostgreSQL: down during cleanup failed")
		}
	}
	// What a failed down left is stopped here, by its recorded identity.
	if err := runstate.Stop(r.work, r.say); err != nil {
		fmt.Fprintf(r.env.Stderr, "runstate stop: %v\n", err)
		r.log.Printf("warning: something the run recorded could not be stopped or removed (above)")
	}
	r.phase("", "", "")
	if err := runstate.Release(r.work); err != nil {
		r.log.Printf("warning: the run state %s could not be deleted", r.work)
	}
	return code
}

// phase ends the running phase (its record to RUN_DIR/phases.jsonl) and
// begins NAME of KIND for PRODUCT ("" = run-wide); name "": only ends it.
// The running phase lives in WORK/phase (aggregate phase --running). Never fatal.
func (r *runner) phase(kind, product, name string) {
	args := []string{"phase", "--running", filepath.Join(r.work, "phase"), "--out", filepath.Join(r.runDir, "phases.jsonl"), "--session", r.session}
	if name != "" {
		args = append(args, "--kind", kind, "--product", product, "--name", name)
	}
	if r.sessStart != "" {
		args = append(args, "--start", r.sessStart)
	}
	var out strings.Builder
	took := ""
	if c, err := r.child(context.Background(), &out, nil, filepath.Join(r.bin, "aggregate"), args...); err != nil || c != 0 {
		r.log.Printf("warning: phase not recorded in %s", filepath.Join(r.runDir, "phases.jsonl"))
	} else if s := strings.TrimRight(out.String(), "\n"); s != "" {
		took = " (after: " + s + ")"
	}
	if name == "" {
		if took != "" {
			r.log.Printf("==%s", took)
		}
		return
	}
	r.log.Printf("== %s%s", name, took)
	r.sessStart = ""
}

// symlink points link at target, replacing what link was (ln -sfn).
func symlink(target, link string) error {
	tmp := link + ".tmp"
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, link)
}

func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}
