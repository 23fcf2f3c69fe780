// Command sampler records the CPU and memory of process trees, Docker
// containers, the host and a PostgreSQL server every interval as
// idpbench.sample/v1 JSON lines, for the memory and saturation figures of
// the comparison.
package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/sample"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usageHead = `Usage: sampler [--pid N | --pidfile F | --match REGEX]... [--docker GLOB]...
               [--postgres DSN] [--every 1s] [--duration D] [-o FILE|-]

Samples every --every until --duration ends, SIGINT/SIGTERM (a normal stop:
exit 0) or, with --until-stdin-eof, end of stdin, then writes one final
record per source. Output: JSON lines "idpbench.sample/v1", one complete line
per write, readable while the sampler runs. Sources ("source" field):
  process:<name>    a process tree: the root(s) and all descendants, re-resolved
                    every tick; rss_bytes (sum), pss_bytes (when every member's
                    smaps_rollup is readable), cpu_pct (100 = one core),
                    threads, processes
  container:<name>  a Docker container (cgroup CPU and memory)
  postgres          xact_per_s, rows_per_s, connections and the server's
                    process tree (cpu_pct, rss_bytes, pss_bytes); the final
                    record adds top_queries from pg_stat_statements
  host              cpu_pct of the whole machine (100 = every core busy)
The DSN may come from --postgres only without a password; a DSN with a
password goes in env IDPBENCH_PG_DSN (or use PGPASSWORD / ~/.pgpass).

Flags:
`

const usageTail = `
Exit codes: 0 ok (a signal while sampling is the normal stop), 1 runtime
error, 2 usage error, 130 interrupted during start-up.

Example (sample Hydra and its database while a ladder runs):
  coldstart --ready http://127.0.0.1:4444/health/ready --mode B --product hydra \
    --pidfile hydra.pid -o coldstart-B.json -- hydra serve all --dev -c hydra.yml
  sampler --pidfile hydra.pid --name hydra \
    --postgres 'postgres://idpbench@127.0.0.1:5432/hydra?sslmode=disable' \
    --every 1s -o samples.jsonl & spid=$!
  scripts/ladder.sh hydra client_credentials
  kill -INT $spid; wait $spid
`

// flags are the command line: the stage config plus what run resolves itself.
type flags struct {
	cfg     sample.Config
	names   []string
	version bool
}

// selectorFlag appends to one ordered list, so --name pairs with the
// selectors in the order they were given, whatever their kind.
type selectorFlag struct {
	kind, typ string
	list      *[]sample.Selector
}

func (f selectorFlag) String() string { return "" }
func (f selectorFlag) Type() string   { return f.typ }
func (f selectorFlag) Set(v string) error {
	*f.list = append(*f.list, sample.Selector{Kind: f.kind, Value: v})
	return nil
}

func newFlagSet(f *flags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("sampler", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	c := &f.cfg
	fs.Var(selectorFlag{sample.SelectPID, "N", &c.Selectors}, "pid", "sample the process tree of pid N (repeatable)")
	fs.Var(selectorFlag{sample.SelectPidfile, "FILE", &c.Selectors}, "pidfile", "sample the tree of the pid on FILE's first line, re-read every tick; waits up to --every for FILE at start (repeatable; PostgreSQL's postmaster.pid works)")
	fs.Var(selectorFlag{sample.SelectMatch, "REGEX", &c.Selectors}, "match", "sample the trees of every process whose full command line matches REGEX, except the sampler and its ancestors (repeatable)")
	fs.StringArrayVar(&f.names, "name", nil, "source name process:`NAME` of the N-th --pid/--pidfile/--match, in order (repeatable; default: the root's command name)")
	fs.StringArrayVar(&c.DockerGlobs, "docker", nil, "sample running Docker containers whose name matches `GLOB` (repeatable; without a Docker engine: a warning, no containers)")
	fs.StringVar(&c.PostgresDSN, "postgres", "", "PostgreSQL `DSN` without a password (default: env IDPBENCH_PG_DSN; \"\" = off)")
	fs.BoolVar(&c.PGAllDatabases, "pg-all-databases", false, "postgres rates and connections of every database (default: the DSN's database only)")
	fs.BoolVar(&c.PGReset, "pg-reset", false, "call pg_stat_statements_reset() at start, so top queries cover the sampled window only")
	fs.DurationVar(&c.Every, "every", time.Second, "sampling interval, e.g. 500ms, 1s")
	fs.DurationVar(&c.Duration, "duration", 0, "stop after this long (0 = until SIGINT/SIGTERM)")
	fs.BoolVar(&c.UntilStdinEOF, "until-stdin-eof", false, "also stop when stdin closes (e.g. when the pipeline feeding it ends)")
	fs.DurationVar(&c.PSSEvery, "pss-every", 10*time.Second, "read PSS (proportional set size, /proc/PID/smaps_rollup) on a tick at most this often; other records carry no pss_bytes (0 = never; <= --every = every tick)")
	fs.BoolVar(&c.Host, "host", true, `write a "host" record (whole-machine CPU) per tick`)
	fs.BoolVar(&c.HostProbe, "host-probe", true, `with --host: each host record carries probe_us, the CPU time a fixed piece of work took (the median of 3 runs, about 6 ms of one core a tick): how fast the cores ran`)
	fs.BoolVar(&c.SelfCPU, "self-cpu", false, "at the end, print the sampler's own CPU seconds and % of one core to stderr")
	fs.StringVarP(&c.Output, "output", "o", "-", "JSON lines `FILE` (\"-\" = stdout)")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	return fs
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f flags
	fs := newFlagSet(&f)
	if code, done := (cli.Help{Tool: "sampler", Head: usageHead, Tail: usageTail}).Parse(fs, args, &f.version, stdout, stderr); done {
		return code
	}
	if err := f.resolve(fs); err != nil {
		return cli.Fail(stderr, "sampler", err)
	}
	// A signal while sampling is the normal stop (exit 0); only one during
	// start-up is an interruption (130).
	return cli.Fail(stderr, "sampler", sample.Run(ctx, f.cfg, stdin, stdout, stderr))
}

// resolve pairs names with selectors, takes the DSN and validates.
func (f *flags) resolve(fs *pflag.FlagSet) error {
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q (sampler takes flags only)", fs.Arg(0))
	}
	if len(f.names) > len(f.cfg.Selectors) {
		return cli.Usagef("--name: %d names for %d --pid/--pidfile/--match selectors", len(f.names), len(f.cfg.Selectors))
	}
	for i, n := range f.names {
		f.cfg.Selectors[i].Name = n
	}
	if fs.Changed("postgres") {
		if sample.DSNHasPassword(f.cfg.PostgresDSN) {
			return cli.Usagef("--postgres: the DSN holds a password, which must not be in argv: put the DSN in env IDPBENCH_PG_DSN or the password in PGPASSWORD or ~/.pgpass")
		}
	} else {
		f.cfg.PostgresDSN = os.Getenv("IDPBENCH_PG_DSN")
	}
	return f.cfg.Validate()
}

// fail prints err once as "sampler: ..." and returns its exit code.
