// Command runstate keeps the state directory of a run for
// scripts/run-comparison.sh: one session holds it at a time, the next
// session after a kill -9 stops what the killed one started (by its
// recorded identity) and removes what it wrote, and a session that ends
// stops what it recorded and deletes the directory (internal/runstate).
// It does the same for the state of a Docker engine scripts/lib/dockerd.sh
// started. For the scripts it also stops a recorded process group, tells whether a
// recorded process runs or a port is free, finds a free port, waits for a
// URL, and checks an adapter's product (its health entry point).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/runstate"
)

const toolName = "runstate"

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func tool() cli.Tool {
	return cli.Tool{
		Name:     toolName,
		Synopsis: "SUBCOMMAND [FLAGS] [STATE|PIDFILE|PORT]",
		About: "Keeps a run's state directory STATE (run-comparison.sh: IDPBENCH_TMP/\n" +
			"idpbench-run-ID-HASH): its pidfiles (pids/*.pid, PRODUCT/pids/*.pid: the pid,\n" +
			"then its start time and the boot id), tmpdirs (directories made outside it),\n" +
			"owner (the holding session's pidfile) and lock. A recorded process is stopped\n" +
			"only while its start time and boot id match. A Docker engine of\n" +
			"scripts/lib/dockerd.sh (STATE/engine, or DIR/engine in it) is known by its\n" +
			"processes naming a path under it. What it does is said on stderr, one\n" +
			"\"cleaned: ...\" line each. docs/design-reference.md#the-scripts (resumable runs).\n\n" +
			"The scripts' process, port and HTTP helpers (scripts/lib/common.sh,\n" +
			"adapter.sh) are subcommands too: stop-group, alive, free-port, port-free,\n" +
			"wait-http, health. A question's answer is its exit status (alive,\n" +
			"port-free, health: 0 yes, 1 no).\n",
		Exits: "Exit status: 0 ok, 1 a live session holds STATE, something could not be\nstopped or removed, or the answer is no, 2 usage error, 130 interrupted.",
		Examples: []string{
			`runstate claim --owner $$ "$state" && runstate clean --run-dir results/quick "$state"`,
			`runstate stop "$state" && runstate release "$state"`,
			`runstate left --product hydra "$state"`,
			`runstate stop-group --timeout 60s "$state/pids/keycloak.pid"`,
			`runstate alive "$state/pids/refop.pid" || echo "refop has exited"`,
			`port="$(runstate free-port)" && runstate port-free "$port"`,
			`runstate wait-http --url http://127.0.0.1:8080/ready --timeout 30s`,
			`runstate health --product refop --url "$issuer/.well-known/openid-configuration" "$state"`,
		},
		Subcommands: []cli.Subcommand{
			{Name: "claim", Summary: "make STATE the session's whose process is --owner; fail when a live session holds it", Run: runClaim},
			{Name: "clean", Summary: "clear what a killed session left: its processes, Docker engine, directories, files, and --run-dir's unfinished writes", Run: runClean},
			{Name: "stop", Summary: "stop STATE's Docker engine and what its pidfiles record (products first); remove the directories it lists", Run: runStop},
			{Name: "release", Summary: "delete STATE, which the calling session holds", Run: runRelease},
			{Name: "left", Summary: "after a product's down: print what its adapter's STATE records that is still there, one a line; exit 1 when anything is", Run: runLeft},
			{Name: "stop-group", Summary: "TERM the process group PIDFILE's process leads, KILL it after --timeout; remove PIDFILE", Run: runStopGroup},
			{Name: "alive", Summary: "exit 0 when the process PIDFILE records (or --pid) runs, 1 when not", Run: runAlive},
			{Name: "free-port", Summary: "print a loopback TCP port free right now", Run: runFreePort},
			{Name: "port-free", Summary: "exit 0 when nothing holds 127.0.0.1:PORT, 1 when something does", Run: runPortFree},
			{Name: "wait-http", Summary: "poll --url until it answers --status, for at most --timeout", Run: runWaitHTTP},
			{Name: "health", Summary: "an adapter's health: its process group lives and --url answers 200 within 10 s; else print why, exit 1", Run: runHealth},
		},
	}
}

// exitStatus ends every subcommand's --help: what runstate exits with.
const exitStatus = `
Exit status: 0 ok (a question: yes), 1 a failure (a question: no), 2 usage
error, 130 interrupted.
`

// errNo is a question's answer no (alive, port-free, health, wait-http):
// exit 1 with nothing more said, and no reason noted (IDPBENCH_REASON_FILE):
// the script that asked says what it means.
var errNo = errors.New("no")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	sub, err := tool().Dispatch(ctx, args, cli.Env{Stdout: stdout, Stderr: stderr})
	if errors.Is(err, errNo) {
		return cli.ExitRuntime
	}
	who := toolName
	if sub != "" {
		who += " " + sub
	}
	return cli.Done(stderr, who, err)
}

// parseState parses a subcommand's flags and its one argument, STATE.
func parseState(name, head string, args []string, e cli.Env, flags func(*pflag.FlagSet)) (string, error) {
	return parseArgs(name, head, "the state directory STATE", 1, args, e, flags)
}

// parseArgs parses a subcommand's flags and its n arguments (what names
// them when they are missing); the one argument, or "" when n is 0.
func parseArgs(name, head, what string, n int, args []string, e cli.Env, flags func(*pflag.FlagSet)) (string, error) {
	fs := cli.NewFlagSet(name)
	if flags != nil {
		flags(fs)
	}
	if err := (cli.Help{Tool: toolName, Head: head, Tail: exitStatus}).ParseSub(fs, args, e.Stdout); err != nil {
		return "", err
	}
	if n == 0 && fs.NArg() > 0 {
		return "", cli.Usagef("want no argument, got %q", fs.Args())
	}
	if n == 0 {
		return "", nil
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		return "", cli.Usagef("want one argument, %s", what)
	}
	return fs.Arg(0), nil
}

// say writes one "cleaned: ..." line.
func say(e cli.Env) func(string) {
	return func(s string) { fmt.Fprintf(e.Stderr, "%s: cleaned: %s\n", toolName, s) }
}

func runClaim(_ context.Context, args []string, e cli.Env) error {
	var owner int
	state, err := parseState("claim", "Usage: runstate claim --owner PID STATE\n\nCreates STATE (0700, this user's, never a symlink) and records PID, the\nsession's shell, as its owner; fails (exit 1) when a live session holds it.\n\nFlags:\n",
		args, e, func(fs *pflag.FlagSet) {
			fs.IntVar(&owner, "owner", 0, "the `PID` of the session's process (the run's shell: $$)")
		})
	if err != nil {
		return err
	}
	if owner <= 0 {
		return cli.Usagef("--owner PID is required")
	}
	return runstate.Claim(state, owner, func(s string) { fmt.Fprintf(e.Stderr, "%s: %s\n", toolName, s) })
}

func runClean(_ context.Context, args []string, e cli.Env) error {
	var runDir string
	state, err := parseState("clean", "Usage: runstate clean [--run-dir DIR] STATE\n\nClears what a killed session left: records a PostgreSQL server it started but\nnever recorded (found by its directory in STATE/tmpdirs), stops every recorded\nprocess whose identity matches (its process group when it leads one) and a\nDocker engine of STATE (as stop does), removes the directories STATE/tmpdirs\nlists and every file of STATE but owner and lock, and in DIR the temp files of\nunfinished writes (.NAME.tmp-*, NAME.tmp) and empty sample files.\n\nFlags:\n",
		args, e, func(fs *pflag.FlagSet) {
			fs.StringVar(&runDir, "run-dir", "", "the run's results `DIR` (default: none; scripts/lib/dockerd.sh's engine state has none)")
		})
	if err != nil {
		return err
	}
	return runstate.Clean(state, runDir, say(e))
}

func runStop(_ context.Context, args []string, e cli.Env) error {
	state, err := parseState("stop", "Usage: runstate stop STATE\n\nStops a Docker engine of STATE (scripts/lib/dockerd.sh: STATE or a directory in\nit holds the file \"engine\"): dockerd, containerd and what they left (shims,\ncontainers' processes, mounts under it, its containers' cgroups); then what\nSTATE's pidfiles record (the products' first, then the run's own), and removes\nthe directories STATE/tmpdirs lists.\n\nFlags:\n", args, e, nil)
	if err != nil {
		return err
	}
	return runstate.Stop(state, say(e))
}

func runRelease(_ context.Context, args []string, e cli.Env) error {
	state, err := parseState("release", "Usage: runstate release STATE\n\nDeletes STATE, which the calling session holds; refuses while anything is\nmounted under it.\n\nFlags:\n", args, e, nil)
	if err != nil {
		return err
	}
	return runstate.Release(state)
}

const leftHead = `Usage: runstate left --product PRODUCT STATE

After a product's down (scripts/lib/adapter.sh adapter_down), prints what
the adapter's state directory STATE records that is still there, one line
each, and exits 1 when anything is ("runstate left: left after down: ..." on
stderr naming it all), 0 and nothing when nothing is:
  process PID (NAME)          STATE/pids/NAME.pid's pid still runs
  process group G: PID...     live members of a group STATE/pgids lists
  port N (KEY)                a *_PORT value of STATE/state.env a socket still
                              listens on (a connection holding it is not left)
  database NAME               a database STATE/dbs lists still on the product's
                              PostgreSQL cluster (asked while its pg.env exists)
  directory DIR               a directory STATE/dirs lists still exists
It exits 1 too, saying why, when it cannot tell (an unreadable record, a
cluster that does not answer).

Flags:
`

func runLeft(ctx context.Context, args []string, e cli.Env) error {
	var product string
	state, err := parseState("left", leftHead, args, e, func(fs *pflag.FlagSet) {
		fs.StringVar(&product, "product", "", "the product whose adapter wrote STATE (names STATE/PRODUCT-setup.json)")
	})
	if err != nil {
		return err
	}
	if product == "" {
		return cli.Usagef("--product PRODUCT is required")
	}
	if fi, err := os.Stat(state); err != nil || !fi.IsDir() {
		return fmt.Errorf("no state directory %s", state)
	}
	left, err := runstate.Left(ctx, state, product)
	for _, l := range left {
		fmt.Fprintln(e.Stdout, l)
	}
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("left after down: %s", strings.Join(left, ", "))
	}
	return nil
}
