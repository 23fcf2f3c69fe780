package devtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
)

// Busy is the Go tests on a machine kept busy, as a shared 2-core CI
// machine is: `go test -race -count=1 -p 1 ./...` Runs times in a row while
// a busy loop occupies one core. Every run must pass; a timing test that
// judges the machine's scheduler instead of the code fails here.
type Busy struct {
	Root string // the repository
	Runs int    // runs in a row
}

// Validate checks the configuration; its errors are usage errors.
func (b Busy) Validate() error {
	if b.Runs < 1 {
		return cli.Usagef("--runs wants a positive number")
	}
	return nil
}

// Run runs the tests Runs times beside the busy loop, logging each run's
// result, wall time and the load average after it; it stops at the first
// run that fails. The busy loop ends with Run, whatever ends it.
func (b Busy) Run(ctx context.Context, e Env) error {
	if err := requireCmds("go"); err != nil {
		return err
	}
	e.Log.Printf("commit %s; load %s", commit(ctx, b.Root), loadAvg())
	stop := spin()
	defer stop()
	for i := 1; i <= b.Runs; i++ {
		t0 := time.Now()
		cmd := cli.Command(ctx, nil, "go", "test", "-race", "-count=1", "-p", "1", "./...")
		cmd.Dir = b.Root
		cmd.Stdout, cmd.Stderr = e.Stdout, e.Stderr
		code, err := cli.RunCode(cmd)
		s := int(time.Since(t0).Seconds())
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return err
		case code != 0:
			return fmt.Errorf("run %d/%d: FAIL after %d s; load %s", i, b.Runs, s, loadAvg())
		}
		e.Log.Printf("run %d/%d: pass in %d s; load %s", i, b.Runs, s, loadAvg())
	}
	e.Log.Printf("all %d runs passed beside a busy loop", b.Runs)
	return nil
}

// spin occupies one core until stop is called: a goroutine on a thread of
// its own that never sleeps. It ends with the process on any exit, a
// kill -9 included; stop returns once it has.
func spin() (stop func()) {
	var done atomic.Bool
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		for !done.Load() {
		}
	}()
	return func() {
		done.Store(true)
		<-ended
	}
}

// commit is the tree's commit as git log --oneline -1 prints it, or "unknown".
func commit(ctx context.Context, root string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "log", "--oneline", "-1").Output()
	if s := strings.TrimSpace(string(out)); err == nil && s != "" {
		return s
	}
	return "unknown"
}

// loadAvg is the 1, 5 and 15 minute load averages of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if err != nil || len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
