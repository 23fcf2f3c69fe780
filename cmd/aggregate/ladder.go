package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/ladder"
)

const ladderUsage = `Usage: aggregate ladder knee|candidates|pool-size [FLAGS]

How much of a scenario's connection ladder to measure (the ladder tool decides
the same through internal/ladder; these answer by hand):
  knee        after each step of round 1: does round 1 stop here?
  candidates  before a later round: which levels does it repeat?
  pool-size   before a step: how many credentials its pool needs
'aggregate ladder SUBCOMMAND --help' explains its flags.

Exit status: 0 ok (knee answers stop or continue on stdout, both exit 0), 1
runtime error, 2 usage error.
`

const poolSizeUsage = `Usage: aggregate ladder pool-size --mode MODE -c C [--prev STEP.json] --warmup S --duration S [FLAGS]

Prints the size of one ladder step's pool (the ladder tool mints it):
  consume  with --prev (the ladder's previous window, or in a later round the
           level's window of the round before):
             ceil(qps_prev * (c / c_prev) * 1.2 * (warmup + duration)) + 2c
           -- in a closed loop the rate per connection does not grow with c, so
           c / c_prev bounds the growth; 1.2 is margin. Without: c *
           --per-conn-qps * (warmup + duration). At most --cap (an exhausted
           pool is recorded by loadstep, errors.pool_exhausted, never wrapped).
  chain    2 seeds per connection
  reuse    --reuse
`

const poolSizeExample = `  aggregate ladder pool-size --mode consume -c 16 --prev results/latest/hydra/auth_code-c8.json --warmup 60 --duration 10
`

const kneeUsage = `Usage: aggregate ladder knee --dir DIR --scenario S --ladder "C..." [FLAGS]

Reads the round-1 steps of scenario S in DIR (RUN_DIR/PRODUCT: S-c<N>.json for
each N of --ladder, in order, up to the first missing one or --at) and applies the
knee rule: round 1 stops when each of the last two levels raised the best
qps before them by less than --noise percent (a level that is not a steady
state -- errors, an interrupted window, failed connects, driver-limited,
another success rule -- raises nothing) and the last level's P99 is above
that best level's; never before 3 levels. The rule is applied to every
prefix of those steps, so a resumed round 1 stops where it stopped; --at
keeps the levels a resumed round 1 has not reached yet out of the question.

Prints "stop" (measure no more levels of round 1) or "continue" on stdout.
Writes DIR/S.knee.json (idpbench.knee/v1) once the rule stops or the ladder
is measured to its end: the levels measured and skipped, where and why it
stopped. With --full-ladder it always prints "continue", and the record says
where the rule would have stopped (full_ladder: true).
`

const kneeExample = `  aggregate ladder knee --dir results/latest/hydra --scenario discovery --ladder "2 4 8 16 32 64 128" --at 32
  jq -r .reason results/latest/hydra/discovery.knee.json
`

const candidatesUsage = `Usage: aggregate ladder candidates --dir DIR --scenario S

Prints, space-separated on one line, the connection counts that rounds >= 2
of scenario S repeat: of round 1 (DIR/S.knee.json, which round 1 writes
when it ends, lists its levels), the best steady level and the steady
levels with fewer connections whose qps is within 10% of it, at most its 2
nearest; an empty line when no level of round 1 is a steady state. Records
them in the knee record (candidates, candidates_reason). Fails naming the
file when round 1 has no knee record yet (it is not complete).
`

const candidatesExample = `  for c in $(aggregate ladder candidates --dir results/latest/hydra --scenario discovery); do echo "repeat c=$c"; done
`

// Outputs of 'aggregate ladder knee'.
const (
	kneeStop     = "stop"
	kneeContinue = "continue"
)

type kneeConfig struct {
	ladder.KneeConfig
	ladderText string
}

func (c *kneeConfig) validate() error {
	if err := validateDirScenario("ladder knee", c.Dir, c.Scenario); err != nil {
		return err
	}
	for _, f := range strings.Fields(c.ladderText) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return cli.Usagef("ladder knee: --ladder %q: %q is not a connection count (want whole numbers >= 1)", c.ladderText, f)
		}
		c.Ladder = append(c.Ladder, n)
	}
	if len(c.Ladder) == 0 {
		return cli.Usagef("ladder knee: --ladder is required (the connection counts of the whole ladder, e.g. \"2 4 8 16 32 64 128\")")
	}
	if !(c.NoisePct > 0 && c.NoisePct < 100) {
		return cli.Usagef("ladder knee: --noise %g: want a percentage above 0 and below 100", c.NoisePct)
	}
	return nil
}

func validateDirScenario(sub, dir, scenario string) error {
	if dir == "" || scenario == "" {
		return cli.Usagef("%s: --dir and --scenario are required", sub)
	}
	return nil
}

func runLadder(ctx context.Context, args []string, e env) error {
	if len(args) > 0 {
		switch args[0] {
		case "knee":
			return runKnee(args[1:], e)
		case "candidates":
			return runCandidates(args[1:], e)
		case "pool-size":
			return runPoolSize(args[1:], e)
		case "-h", "--help", "help":
			fmt.Fprint(e.Stdout, ladderUsage)
			return nil
		}
		return cli.Usagef("ladder: unknown subcommand %q (want knee, candidates or pool-size)", args[0])
	}
	return cli.Usagef("ladder: a subcommand is required: knee, candidates or pool-size")
}

func runPoolSize(args []string, e env) error {
	p := ladder.PoolSizing{}
	var prev string
	fs := cli.NewFlagSet("ladder pool-size")
	fs.StringVar(&p.Mode, "mode", "", "the pool `MODE`: consume, chain or reuse")
	fs.IntVarP(&p.Connections, "connections", "c", 0, "the step's `CONNECTIONS`")
	fs.StringVar(&prev, "prev", "", "the step `FILE` a consumed pool is sized from (none: the ladder's first step)")
	fs.Float64Var(&p.WarmupS, "warmup", 0, "the longest the step's warmup may be, `SECONDS`")
	fs.Float64Var(&p.DurationS, "duration", 0, "the step's measured window, `SECONDS`")
	fs.Float64Var(&p.PerConnQPS, "per-conn-qps", 50, "consume, first step: the `RATE` assumed per connection")
	fs.IntVar(&p.Cap, "cap", 100000, "consume: at most `N`")
	fs.IntVar(&p.Reuse, "reuse", 256, "reuse: the pool's size `N`")
	if err := parse(fs, args, poolSizeUsage, poolSizeExample, e); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("ladder pool-size: unexpected argument %q", fs.Arg(0))
	}
	if p.WarmupS < 0 || p.DurationS <= 0 || p.PerConnQPS <= 0 || p.Cap < 1 || p.Reuse < 1 {
		return cli.Usagef("ladder pool-size: --warmup >= 0, --duration, --per-conn-qps, --cap and --reuse > 0 (got %g, %g, %g, %d, %d)",
			p.WarmupS, p.DurationS, p.PerConnQPS, p.Cap, p.Reuse)
	}
	if prev != "" {
		s, err := ladder.ReadStep(prev)
		if err != nil {
			return err
		}
		p.Prev = s
	}
	n, err := ladder.PoolSize(p)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	_, err = fmt.Fprintln(e.Stdout, n)
	return err
}

func runKnee(args []string, e env) error {
	var c kneeConfig
	fs := cli.NewFlagSet("ladder knee")
	fs.StringVar(&c.Dir, "dir", "", "the product's result `DIR` (RUN_DIR/PRODUCT) holding the step files")
	fs.StringVar(&c.Scenario, "scenario", "", "the scenario `NAME`, as in the step file names")
	fs.StringVar(&c.ladderText, "ladder", "", "the whole ladder: connection `COUNTS`, space-separated, in order")
	fs.Float64Var(&c.NoisePct, "noise", ladder.DefaultNoisePct, "a gain below this `PERCENT` of the best qps is noise")
	fs.IntVar(&c.At, "at", 0, "the level just measured (`CONNECTIONS`): only the steps up to it count (default: every step present)")
	fs.BoolVar(&c.FullLadder, "full-ladder", false, "never stop; record where the rule would have stopped")
	if err := parse(fs, args, kneeUsage, kneeExample, e); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("ladder knee: unexpected argument %q", fs.Arg(0))
	}
	if err := c.validate(); err != nil {
		return err
	}
	stop, rec, err := ladder.DecideKnee(c.KneeConfig)
	if err != nil {
		return err
	}
	if rec != nil {
		if err := ladder.WriteKnee(ladder.KneePath(c.Dir, c.Scenario), rec); err != nil {
			return err
		}
	}
	out := kneeContinue
	if stop {
		out = kneeStop
	}
	_, err = fmt.Fprintln(e.Stdout, out)
	return err
}

func runCandidates(args []string, e env) error {
	var dir, scenario string
	fs := cli.NewFlagSet("ladder candidates")
	fs.StringVar(&dir, "dir", "", "the product's result `DIR` (RUN_DIR/PRODUCT) holding the step files")
	fs.StringVar(&scenario, "scenario", "", "the scenario `NAME`, as in the step file names")
	if err := parse(fs, args, candidatesUsage, candidatesExample, e); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("ladder candidates: unexpected argument %q", fs.Arg(0))
	}
	if err := validateDirScenario("ladder candidates", dir, scenario); err != nil {
		return err
	}
	rec, err := ladder.DecideCandidates(dir, scenario)
	if err != nil {
		return err
	}
	if err := ladder.WriteKnee(ladder.KneePath(dir, scenario), rec); err != nil {
		return err
	}
	cs := make([]string, len(rec.Candidates))
	for i, n := range rec.Candidates {
		cs[i] = strconv.Itoa(n)
	}
	_, err = fmt.Fprintln(e.Stdout, strings.Join(cs, " "))
	return err
}
