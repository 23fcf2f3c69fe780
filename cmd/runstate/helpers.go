package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/runstate"
)

// The scripts' process, port and HTTP helpers (scripts/lib/common.sh and
// adapter.sh call them).

func runStopGroup(_ context.Context, args []string, e cli.Env) error {
	var timeout time.Duration
	pidfile, err := parseArgs("stop-group", `Usage: runstate stop-group [--timeout D] PIDFILE

Stops the process group whose leader's pid PIDFILE records (its first line;
an adapter's STATE/pids/PRODUCT.pid): TERM to the group, and when a member
is left after --timeout a warning on stderr and KILL. Then removes PIDFILE.
Fails (exit 1) naming the members that survive KILL, or on a PIDFILE whose
first line is not a pid; nothing to do when PIDFILE does not exist or is
empty.

Flags:
`, "the pidfile PIDFILE", 1, args, e, func(fs *pflag.FlagSet) {
		fs.DurationVar(&timeout, "timeout", 20*time.Second, "how long the group has to end after TERM before KILL (a Go duration)")
	})
	if err != nil {
		return err
	}
	if timeout <= 0 {
		return cli.Usagef("--timeout must be positive, got %s", timeout)
	}
	return runstate.StopGroup(pidfile, timeout, func(s string) { fmt.Fprintf(e.Stderr, "%s stop-group: warning: %s\n", toolName, s) })
}

func runAlive(_ context.Context, args []string, e cli.Env) error {
	var pid int
	fs := cli.NewFlagSet("alive")
	fs.IntVar(&pid, "pid", 0, "a `PID` to ask about instead of a pidfile's")
	if err := (cli.Help{Tool: toolName, Head: `Usage: runstate alive PIDFILE
       runstate alive --pid PID

Exits 0 when the process PIDFILE records (the pid on its first line) or PID
runs, 1 when it does not: gone, a zombie, or PIDFILE missing, empty or
without a pid. By pid alone, not by the start time a pidfile may record.

Flags:
`, Tail: exitStatus}).ParseSub(fs, args, e.Stdout); err != nil {
		return err
	}
	var alive bool
	switch {
	case pid == 0 && fs.NArg() == 1 && fs.Arg(0) != "":
		alive = runstate.Alive(fs.Arg(0))
	case pid > 0 && fs.NArg() == 0:
		alive = runstate.Running(pid)
	default:
		return cli.Usagef("want one of a pidfile PIDFILE and --pid PID")
	}
	if alive {
		return nil
	}
	return errNo
}

func runFreePort(_ context.Context, args []string, e cli.Env) error {
	if _, err := parseArgs("free-port", `Usage: runstate free-port

Prints a loopback TCP port the kernel reports free right now (bound on
127.0.0.1:0 and closed): another process may take it before it is used.

Flags:
`, "", 0, args, e, nil); err != nil {
		return err
	}
	port, err := runstate.FreePort()
	if err != nil {
		return err
	}
	fmt.Fprintln(e.Stdout, port)
	return nil
}

func runPortFree(_ context.Context, args []string, e cli.Env) error {
	arg, err := parseArgs("port-free", `Usage: runstate port-free PORT

Exits 0 when 127.0.0.1:PORT can be bound right now, 1 when something holds
it (a listener on it or on the wildcard address).
  runstate port-free "$port" || die "port $port is still in use"

Flags:
`, "the port PORT", 1, args, e, nil)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(arg)
	if err != nil || port <= 0 || port > 65535 {
		return cli.Usagef("%q is not a port (1-65535)", arg)
	}
	if runstate.PortFree(port) {
		return nil
	}
	return errNo
}

func runWaitHTTP(ctx context.Context, args []string, e cli.Env) error {
	var (
		url, pidfile string
		status       int
		timeout      time.Duration
	)
	if _, err := parseArgs("wait-http", `Usage: runstate wait-http --url URL [--status N] --timeout D [--pidfile PIDFILE]

Asks URL every 200 ms (each GET at most 2 s, redirects not followed) until
it answers status N; exit 0 then. Exit 1 after --timeout, or as soon as the
process PIDFILE records has exited, saying which on stderr (not noted as
the run's reason: the script that waited says what it means).

Flags:
`, "", 0, args, e, func(fs *pflag.FlagSet) {
		fs.StringVar(&url, "url", "", "the `URL` to ask")
		fs.IntVar(&status, "status", 200, "the HTTP status `N` to wait for")
		fs.DurationVar(&timeout, "timeout", 0, "how long to wait at most (a Go duration: 10s)")
		fs.StringVar(&pidfile, "pidfile", "", "stop waiting when the process this `PIDFILE` records has exited")
	}); err != nil {
		return err
	}
	switch {
	case url == "":
		return cli.Usagef("--url URL is required")
	case timeout <= 0:
		return cli.Usagef("--timeout D is required (positive)")
	case status < 100 || status > 599:
		return cli.Usagef("--status %d is not an HTTP status", status)
	}
	err := runstate.WaitHTTP(ctx, url, status, timeout, pidfile)
	if err == nil || ctx.Err() != nil {
		return err
	}
	fmt.Fprintf(e.Stderr, "%s wait-http: %v\n", toolName, err)
	return errNo
}

func runHealth(ctx context.Context, args []string, e cli.Env) error {
	var product, url string
	state, err := parseState("health", `Usage: runstate health --product PRODUCT --url URL STATE

An adapter's health entry point (scripts/lib/adapter.sh): exits 0 when the
process group STATE/pids/PRODUCT.pid records (when it exists) has a live
member and URL, the product's discovery endpoint, answers 200 within 10 s.
Else exits 1 and prints why on stdout, one line (the ladder keeps it):
  its process group N has exited (logs: STATE/logs)
  its discovery endpoint URL answers CODE
  its discovery endpoint URL answers no HTTP response

Flags:
`, args, e, func(fs *pflag.FlagSet) {
		fs.StringVar(&product, "product", "", "the product whose adapter wrote STATE (names STATE/pids/PRODUCT.pid)")
		fs.StringVar(&url, "url", "", "the product's discovery `URL`")
	})
	switch {
	case err != nil:
		return err
	case product == "":
		return cli.Usagef("--product PRODUCT is required")
	case url == "":
		return cli.Usagef("--url URL is required")
	}
	why := runstate.Health(ctx, runstate.Prober{}, state, product, url)
	if why == "" {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fmt.Fprintln(e.Stdout, why)
	return errNo
}
