package main

import (
	"context"

	"github.com/idpbench/idpbench/cmd/devtest/internal/devtest"
	"github.com/idpbench/idpbench/internal/cli"
)

const fuzzHead = `Usage: scripts/fuzz.sh [--time D] [--list] [TARGET...]
       (devtest fuzz [--root DIR] FLAGS)

Runs every Go fuzz target of idpbench, one at a time.

The targets are found, not listed: every ` + "`func FuzzXxx(`" + ` in a *_test.go
file of the repository, so a new one is never left out. Each runs on its
own as
  go test -run '^$' -fuzz '^FuzzXxx$' -fuzztime D -parallel 1 ./pkg
(one worker: the machine's cores are shared), from its module's directory
(products/refop/server and deploy/kubernetes are modules of their own). Every target
runs, and it fails at the end naming those that failed. A run that failed
only by go's own race at the end of a timed -fuzztime (golang/go#75804: a
bare "context deadline exceeded", no input written, no seed failing) is a
warning, not a failure.

A failing input is written by go under the package's testdata/fuzz/FuzzXxx/
and kept there: commit it with the fix, and plain ` + "`go test`" + ` runs it as a
regression seed from then on. Inputs that only widen coverage stay in go's
cache ($(go env GOCACHE)/fuzz), out of the repository.

TARGET: fuzz only these (e.g. FuzzResponse); default every target.

Flags:
`

const fuzzTail = `
Exit status: 0 every target passed, 1 one failed (named at the end), 2 a bad
argument, 130 interrupted. Rules and records: docs/design-reference.md#the-scripts.

Examples:
  scripts/fuzz.sh --time 5m              # the long run: about 5 minutes a target
  scripts/fuzz.sh --time 1m FuzzMember   # one target
  scripts/fuzz.sh --list                 # the targets: package, name
`

const busyHead = `Usage: scripts/test-busy.sh [--runs N]
       (devtest busy [--root DIR] FLAGS)

The Go tests on a machine kept busy, as a shared 2-core CI machine is:
go test -race -count=1 -p 1 ./... N times in a row while a busy loop
occupies one core. Every run must pass; a timing test that judges the
machine's scheduler instead of the code fails here.

Logs the commit and the load average, then per run pass or fail, its wall
time and the load average after it; the go test output goes to stdout and
stderr as well (results/test-busy/ holds a committed one). It stops at the
first run that fails.

Flags:
`

const busyTail = `
Exit status: 0 every run passed, 1 a run failed (it stops there), 2 a bad
argument, 130 interrupted. Rules and records: docs/design-reference.md#the-scripts.

Example:
  scripts/test-busy.sh --runs 5 2>&1 | tee results/test-busy/"$(git rev-parse --short HEAD)".log
`

func runFuzz(ctx context.Context, args []string, e cli.Env) error {
	f := devtest.Fuzz{}
	var root string
	fs := cli.NewFlagSet("fuzz")
	fs.StringVar(&f.Time, "time", "3s", "how long each target fuzzes, `D` as go test -fuzztime takes it (3s, 5m, or a count of inputs such as 10000x)")
	fs.BoolVar(&f.List, "list", false, "print the targets found (package, name) and exit")
	fs.StringVar(&root, "root", "", "the repository, `DIR` (default: found from the working directory up)")
	if err := (cli.Help{Tool: "devtest fuzz", Head: fuzzHead, Tail: fuzzTail}).ParseSub(fs, args, e.Stdout); err != nil {
		return err
	}
	f.Names = fs.Args()
	if err := f.Validate(); err != nil {
		return err
	}
	var err error
	if f.Root, err = devtest.Root(root); err != nil {
		return err
	}
	return f.Run(ctx, env("fuzz", e))
}

func runBusy(ctx context.Context, args []string, e cli.Env) error {
	b := devtest.Busy{}
	var root string
	fs := cli.NewFlagSet("busy")
	fs.IntVar(&b.Runs, "runs", 5, "runs in a row, `N`")
	fs.StringVar(&root, "root", "", "the repository, `DIR` (default: found from the working directory up)")
	if err := (cli.Help{Tool: "devtest busy", Head: busyHead, Tail: busyTail}).ParseSub(fs, args, e.Stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unknown argument: %s", fs.Arg(0))
	}
	if err := b.Validate(); err != nil {
		return err
	}
	var err error
	if b.Root, err = devtest.Root(root); err != nil {
		return err
	}
	return b.Run(ctx, env("busy", e))
}

const staticHead = `Usage: devtest static [--root DIR]

The repository's static checks, scripts/test.sh's first phase (it builds
the tools and runs this):
  gofmt -l        every *.go file of the tree (directories named .git left
                  out); a file it would change is a finding
  go vet ./...    in every module: the root and each directory with a go.mod
                  of its own (products/refop/server, deploy/kubernetes; testdata and
                  directories starting with . or _ left out, as go does)
  bash -n         scripts/*.sh scripts/lib/*.sh products/*/adapter
                  products/*/*.sh products/*/local/*.sh, one at a time
  shellcheck -x   the same files at its default severity (style and up),
                  following every source; its report goes to stderr

Each check is logged as it starts. Every check runs, and it fails at the
end naming what each failed one found (the files, or the module), so one
run shows every kind of finding. go, gofmt, bash and shellcheck must be on
PATH (test.sh installs shellcheck from the OS packages as root).

Flags:
`

const staticTail = `
Exit status: 0 every check passed, 1 one failed (named at the end), 2 a bad
argument, 130 interrupted. Rules and records: docs/design-reference.md#the-scripts.

Examples:
  go run ./cmd/devtest static    # the static checks alone, from anywhere in the repository
  scripts/test.sh --unit         # them first, then the Go tests and the fuzz targets
`

func runStatic(ctx context.Context, args []string, e cli.Env) error {
	var root string
	fs := cli.NewFlagSet("static")
	fs.StringVar(&root, "root", "", "the repository, `DIR` (default: found from the working directory up)")
	if err := (cli.Help{Tool: "devtest static", Head: staticHead, Tail: staticTail}).ParseSub(fs, args, e.Stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unknown argument: %s", fs.Arg(0))
	}
	s := devtest.Static{}
	var err error
	if s.Root, err = devtest.Root(root); err != nil {
		return err
	}
	return s.Run(ctx, env("static", e))
}
