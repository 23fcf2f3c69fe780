// Package gcjitter is the GC-jitter run of one running product (cmd/gcjitter,
// scripts/gcjitter.sh): one continuous loadstep, long enough for garbage
// collectors and background jobs to show up in the P99 of its intervals, on
// userinfo, else client_credentials (docs/design-methodology.md#gc-jitter).
// What it measures is the product's entry's answer (ladder.Env.Ask); its
// adapter (internal/adapter) is asked for the version, fresh and a pool
// without a plan.
package gcjitter

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/idpbench/idpbench/internal/adapter"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/placement"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
)

// Options are the command line as given (cmd/gcjitter); "" or 0 where a
// flag was not given.
type Options struct {
	Product      string
	Quick        bool // the smoke profile (the label profile=)
	ladder.Where      // StepTotal 0: 1
}

// Config is one GC-jitter run, validated.
type Config struct {
	Product          string
	Profile          string // quick or full
	Connections      int
	WarmupS          int
	DurationS        int
	ReusePool        int // a reuse pool's size
	ReuseMaxAgeS     int // the ladder's reuse pool is kept while younger
	RunDir, StateDir string
	StepOffset       int
	StepTotal        int
	Adapter          string
	Loadstep         string
	DriverCPUs       string
}

// NewConfig resolves o and the environment (getenv) into a Config, or a
// usage error naming the flag or variable.
func NewConfig(o Options, getenv func(string) string) (Config, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	w, err := o.Where.Resolve(getenv)
	c := Config{Product: o.Product, Profile: "full", RunDir: w.RunDir, StateDir: w.StateDir, StepOffset: w.StepOffset,
		StepTotal: w.StepTotal, Loadstep: w.Loadstep(), DriverCPUs: getenv(placement.EnvDriver)}
	if err != nil {
		return c, err
	}
	if c.StepTotal == 0 {
		c.StepTotal = 1
	}
	duration := "60" // full and quick alike since issue 35's time budget (was 120 s full)
	if o.Quick {
		c.Profile = "quick"
	}
	for _, v := range []struct {
		p     *int
		name  string
		value string
		least int
	}{
		{&c.Connections, "IDPBENCH_GCJITTER_C", env("IDPBENCH_GCJITTER_C", "32"), 1},
		{&c.WarmupS, "IDPBENCH_GCJITTER_WARMUP_S (else IDPBENCH_WARMUP_S)", env("IDPBENCH_GCJITTER_WARMUP_S", env("IDPBENCH_WARMUP_S", "5")), 0},
		{&c.DurationS, "IDPBENCH_GCJITTER_S", env("IDPBENCH_GCJITTER_S", duration), 1},
		{&c.ReusePool, "IDPBENCH_REUSE_POOL", env("IDPBENCH_REUSE_POOL", "256"), 1},
		{&c.ReuseMaxAgeS, "IDPBENCH_REUSE_MAX_AGE_S", env("IDPBENCH_REUSE_MAX_AGE_S", "120"), 0},
	} {
		n, ok := ladder.Whole(v.value)
		if !ok || n < v.least {
			return c, cli.Usagef("%s %s: want a whole number >= %d", v.name, v.value, v.least)
		}
		*v.p = n
	}
	c.Adapter, err = w.AdapterOf(o.Product, "scripts/gcjitter.sh", getenv)
	return c, err
}

// Scenario is what the run measures: userinfo, or client_credentials with
// why (the label fallback_reason) when userinfo is N/A (na) or its access
// tokens (ttlS seconds; 0: unknown) expire within the run (runS seconds)
// plus ladder.TTLMarginS.
func Scenario(na bool, ttlS, runS int) (scenario, fallback string) {
	switch {
	case na:
		return schema.ScenarioClientCredentials, "userinfo is N/A for this product"
	case ttlS > 0 && ttlS < runS+ladder.TTLMarginS:
		return schema.ScenarioClientCredentials, fmt.Sprintf("access tokens live %ds, less than the %ds run", ttlS, runS)
	}
	return schema.ScenarioUserinfo, ""
}

// ReuseFresh reports whether the ladder's reuse pool, ageS seconds old (-1:
// none), serves the run: younger than maxAgeS, its tokens (ttlS; 0:
// unknown) outliving the run (runS) by ladder.TTLMarginS.
func ReuseFresh(ageS, runS, ttlS, maxAgeS int) bool {
	return ageS >= 0 && ageS < maxAgeS && (ttlS == 0 || ttlS-ageS >= runS+ladder.TTLMarginS)
}

// Env is what a run takes from its surroundings (as ladder.Env).
type Env = ladder.Env

// Run runs the GC-jitter run c describes. Its errors: ladder.Exit
// (cli.ExitInterrupted) once logged, else a failure.
func Run(ctx context.Context, c Config, e Env) error {
	lg := cli.Logger{W: e.Stderr, Tag: "gcjitter", Now: e.Now}
	ad := adapter.Adapter{Path: c.Adapter, Stderr: e.Stderr, DriverCPUs: c.DriverCPUs, Interrupt: e.Interrupt}
	err := run(ctx, c, e, lg, ad)
	if ctx.Err() != nil && !errors.As(err, new(ladder.Exit)) {
		lg.Printf("interrupted at %s gcjitter", c.Product)
		return ladder.Exit(cli.ExitInterrupted)
	}
	return err
}

func run(ctx context.Context, c Config, e Env, lg cli.Logger, ad adapter.Adapter) error {
	if fi, err := os.Stat(c.Adapter); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("no adapter %s", c.Adapter)
	}
	dir, out := filepath.Join(c.RunDir, c.Product), filepath.Join(c.RunDir, c.Product, "gcjitter.json")
	for _, d := range []string{dir, filepath.Join(c.StateDir, "pools")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if ladder.Complete(out) {
		lg.Printf("[step %d/%d] %s gcjitter: complete, skipped", c.StepOffset+1, c.StepTotal, c.Product)
		return nil
	}
	if fi, err := os.Stat(c.Loadstep); err != nil || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("tool loadstep is not built (%s); run build_tools (scripts/run-comparison.sh does)", c.Loadstep)
	}
	if e.Ask == nil {
		return fmt.Errorf("%s: no answers for its scenarios (ladder.Env.Ask unset)", c.Product)
	}
	runS := c.WarmupS + c.DurationS
	ans, err := e.Ask(c.StateDir, schema.ScenarioUserinfo)
	if err != nil && !errors.Is(err, product.ErrNA) {
		return err
	}
	scenario, fallback := Scenario(err != nil, ans.TTL, runS)
	var labels []string
	if fallback != "" {
		if err == nil {
			lg.Printf("userinfo access tokens live %ds, less than the %ds run: falling back to client_credentials", ans.TTL, runS)
		}
		labels = []string{"--label", "fallback=client_credentials", "--label", "fallback_reason=" + fallback}
		if ans, err = e.Ask(c.StateDir, scenario); err != nil {
			return err
		}
	}
	// As before every ladder window: the adapter's fresh start (refop only).
	if ans.Fresh {
		if err := ad.Fresh(ctx, c.StateDir, scenario); err != nil {
			return fmt.Errorf("%s did not start again before the GC-jitter run: %w", c.Product, err)
		}
	}
	if err := ladder.MintOwn(ctx, ladder.Mintpool(c.Loadstep), c.DriverCPUs, ans.Before, e.Time(), lg, e); err != nil {
		return err
	}
	var poolargs []string
	switch mode := ladder.PoolMode(ans.Load); mode {
	case "":
	case ladder.PoolReuse:
		pool, err := reusePool(ctx, c, e, lg, ad, scenario, ans.Pool, runS, ans.TTL, e.Time())
		if err != nil {
			return err
		}
		poolargs = []string{"--pool", pool}
	default:
		return fmt.Errorf("%s %s: pool mode %s cannot feed one long step (want reuse or none)", c.Product, scenario, mode)
	}
	// The product's own metrics every 5 s (none: not scraped).
	metrics := slices.Clone(ans.Metrics)
	if len(metrics) > 0 {
		metrics = append(metrics, "--server-metrics-every", "5s")
	}
	lg.Printf("[step %d (of at most %d)] %s gcjitter %s c=%d (%ds + %ds, 10s intervals; ends in >= %ds)",
		c.StepOffset+1, c.StepTotal, c.Product, scenario, c.Connections, c.WarmupS, c.DurationS, runS)
	version, err := ad.Version(ctx)
	if err != nil {
		return err
	}
	args := []string{c.Loadstep, "--url", ans.Endpoint, "--scenario", scenario, "-c", strconv.Itoa(c.Connections),
		"--warmup", fmt.Sprintf("%ds", c.WarmupS), "--duration", fmt.Sprintf("%ds", c.DurationS), "--interval", "10s", "--timeout", "10s",
		"--jit-pidfile", filepath.Join(c.StateDir, "pids", cmp.Or(ans.Process, c.Product)+".pid"),
		"--product", c.Product, "--product-version", version,
		"--label", "phase=gcjitter", "--label", "profile=" + c.Profile}
	args = append(append(append(append(append(args, labels...), ans.Load...), poolargs...), metrics...), "-o", out)
	code, err := ladder.RunChild(ctx, e.Interrupt, placement.Pinned(c.DriverCPUs, args...), e.Stdout, e.Stderr)
	switch {
	case err != nil:
		return err
	case code == cli.ExitInterrupted || ctx.Err() != nil:
		lg.Printf("interrupted at %s gcjitter", c.Product)
		return ladder.Exit(cli.ExitInterrupted)
	case code == cli.ExitTargetLost:
		at := "when unknown"
		if s, err := ladder.ReadStep(out); err == nil && s.TargetLostAt != nil {
			at = s.TargetLostAt.Format(time.RFC3339Nano)
		}
		return fmt.Errorf("%s stopped accepting connections during the GC-jitter run (%s)", c.Product, at)
	case code != 0:
		return fmt.Errorf("loadstep failed at %s gcjitter (exit %d)", c.Product, code)
	}
	s, err := ladder.ReadStep(out)
	if err != nil {
		return err
	}
	lg.Printf("%s gcjitter: %s", c.Product, Summary(s))
	return nil
}

// Summary is the run's line in the log: its status, requests, error rate
// and how many intervals, as compact JSON.
func Summary(s *schema.Step) string {
	b, _ := json.Marshal(struct {
		Status    string  `json:"status"`
		Requests  int64   `json:"requests"`
		ErrorRate float64 `json:"error_rate"`
		Intervals int     `json:"intervals"`
	}{s.Status, s.Requests, s.ErrorRate, len(s.Intervals)})
	return string(b)
}

// reusePool is the path of a reuse pool for the run: the ladder's
// STATE/pools/SCENARIO.pool when ReuseFresh, else one minted in its place.
func reusePool(ctx context.Context, c Config, e Env, lg cli.Logger, ad adapter.Adapter, scenario string, plan *product.Pool, runS, ttl int, now time.Time) (string, error) {
	pool, age := filepath.Join(c.StateDir, "pools", scenario+".pool"), -1
	if fi, err := os.Stat(pool); err == nil && fi.Size() > 0 {
		age = ladder.AgeS(fi, now)
	}
	if ReuseFresh(age, runS, ttl, c.ReuseMaxAgeS) {
		lg.Printf("reusing the ladder's %s pool (%s, %ds old)", scenario, pool, age)
		return pool, nil
	}
	lg.Printf("minting a reuse pool of %d for %s", c.ReusePool, scenario)
	return pool, ladder.MintPool(ctx, e, ad, ladder.Mintpool(c.Loadstep), c.StateDir, scenario, plan, c.ReusePool, pool)
}
