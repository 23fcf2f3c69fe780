// Command run is the whole comparison, the products round by round
// (internal/run) of the registry (products), wired here;
// scripts/run-comparison.sh builds the tools and execs it. Its --help is
// run-comparison.sh's.
package main

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/run"
	"github.com/idpbench/idpbench/products"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := run.Main(ctx, os.Args[1:], run.Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		Setenv: os.Setenv, Unsetenv: os.Unsetenv, Now: time.Now, Started: started(), Pid: os.Getpid(),
		Registry: run.Registry{Default: products.Default(), Names: products.Names(), Lookup: products.Lookup}})
	stop()
	os.Exit(code)
}

// started is when this process began (the wrapper that execs this tool,
// so the build is part of the session), from /proc; now when unreadable.
func started() time.Time {
	stat, err1 := os.ReadFile("/proc/self/stat")
	sys, err2 := os.ReadFile("/proc/stat")
	if err1 != nil || err2 != nil {
		return time.Now()
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return time.Now()
	}
	ticks, err := strconv.ParseInt(f[19], 10, 64) // field 22, starttime, in clock ticks since boot
	if err != nil {
		return time.Now()
	}
	for _, l := range strings.Split(string(sys), "\n") {
		if v, ok := strings.CutPrefix(l, "btime "); ok {
			if boot, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				const hz = 100 // USER_HZ on Linux
				return time.Unix(boot, 0).Add(time.Duration(ticks) * time.Second / hz)
			}
		}
	}
	return time.Now()
}
