// Command coldstart starts a product's server, times it from exec to its
// first ready response, records the peak RSS of its process tree until then
// (idpbench.coldstart/v1), and leaves it running or stops it.
package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/coldstart"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usageHead = `Usage: coldstart --ready URL [flags] -- COMMAND [ARGS...]

Starts COMMAND in its own process group (stdout and stderr to --log, else
/dev/null), GETs --ready every --poll until it answers --ready-status
(connection refused and other statuses mean "not yet"), and writes one JSON
record "idpbench.coldstart/v1": seconds_to_ready (from just before exec to
the first ready response, resolution --poll), peak_rss_bytes (the process
tree and process group, sampled every --poll; with --containers the
containers' memory instead, peak_measured_as "cgroup") and the command.
Then the product is left running (exit 0; --pidfile holds its pid, and on a
second line its start time in clock ticks since boot and the boot id, so a
later process given the same pid is never taken for it) or, with --stop,
stopped: SIGTERM to the process group, SIGKILL after --stop-grace.
If it exits before ready or --timeout passes, the record says status "error"
and why (with the last lines of --log), the process group is stopped and
coldstart exits 1. SIGINT stops the product too: status "interrupted", exit 130.

The command line is written into the record: pass secrets to the product
through its environment or files (coldstart passes its environment on),
never as arguments.

Flags:
`

const usageTail = `
Exit codes: 0 ready (the product left running, or stopped with --stop), 1 not
ready or a runtime error (the record says why), 2 usage error, 130 interrupted.

Example (mode B cold start of Hydra, left running for the sampler and the ladders):
  coldstart --ready http://127.0.0.1:4444/health/ready --mode B --product hydra \
    --product-version v2.3.0 --log hydra.log --pidfile hydra.pid -o coldstart-B.json \
    -- hydra serve all --dev -c hydra.yml
  # compose mode: the peak of the product's containers, not of the compose client
  coldstart --ready http://127.0.0.1:4444/health/ready --mode A --containers 'idpbench-hydra,idpbench-hydra-migrate' \
    -o coldstart-A.json -- docker compose -f products/hydra/compose.yml up --no-build
  sampler --pidfile hydra.pid --name hydra \
    --postgres 'postgres://idpbench@127.0.0.1:5432/hydra?sslmode=disable' \
    --every 1s -o samples.jsonl &
`

type flags struct {
	cfg     coldstart.Config
	version bool
}

func newFlagSet(f *flags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("coldstart", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetInterspersed(false) // the first argument that is not a flag starts the command
	fs.SetOutput(io.Discard)
	c := &f.cfg
	fs.StringVar(&c.ReadyURL, "ready", "", "readiness `URL` polled with GET (required), e.g. http://127.0.0.1:4444/health/ready")
	fs.IntVar(&c.ReadyStatus, "ready-status", 200, "HTTP `STATUS` that means ready")
	fs.DurationVar(&c.Timeout, "timeout", 5*time.Minute, "give up when not ready this long after start")
	fs.DurationVar(&c.Poll, "poll", 100*time.Millisecond, "interval between polls and RSS samples (the resolution of seconds_to_ready)")
	fs.StringVar(&c.Mode, "mode", "", "`MODE` (recorded): A = fresh database incl. initialisation, B = initialised database, product restarted")
	fs.StringVar(&c.Product, "product", "", "product `NAME` (recorded)")
	fs.StringVar(&c.ProductVersion, "product-version", "", "product `VERSION` (recorded)")
	fs.StringVar(&c.Pidfile, "pidfile", "", "write the product's pid to `FILE` once started (the sampler can follow it); removed when coldstart stops the product")
	fs.BoolVar(&c.Stop, "stop", false, "stop the product once ready (default: leave it running)")
	fs.DurationVar(&c.StopGrace, "stop-grace", 10*time.Second, "when stopping: time between SIGTERM and SIGKILL to the process group")
	fs.StringVar(&c.Log, "log", "", "`FILE` for the product's stdout and stderr, mode 0600 (default: /dev/null)")
	fs.StringSliceVar(&c.Containers, "containers", nil, "the product runs in containers whose names match `GLOB` (comma-separated or repeated; compose mode): the peak is their memory (usage minus inactive page cache, summed; peak_measured_as \"cgroup\"), not the command's process tree")
	fs.StringVarP(&c.Output, "output", "o", "-", "result JSON `FILE` (\"-\" = stdout)")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	return fs
}

func run(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var f flags
	fs := newFlagSet(&f)
	if code, done := (cli.Help{Tool: "coldstart", Head: usageHead, Tail: usageTail}).Parse(fs, args, &f.version, stdout, stderr); done {
		return code
	}
	f.cfg.Command = fs.Args()
	if err := f.cfg.Validate(); err != nil {
		return cli.Fail(stderr, "coldstart", err)
	}
	return cli.Fail(stderr, "coldstart", coldstart.Run(ctx, f.cfg, stdout, stderr))
}

// fail prints err once as "coldstart: ..." and returns its exit code.
