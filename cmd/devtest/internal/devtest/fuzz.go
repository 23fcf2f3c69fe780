package devtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/cli"
)

// Fuzz is one run of the repository's fuzz targets, one at a time.
type Fuzz struct {
	Root  string   // the repository
	Time  string   // each target's -fuzztime (3s, 5m, 10000x)
	List  bool     // print the targets and run none
	Names []string // the targets to run; none: every target
}

// Target is one fuzz target: the package's directory as go test takes it
// from the root ("./internal/load") and the function's name.
type Target struct{ Pkg, Name string }

func (t Target) String() string { return t.Pkg + " " + t.Name }

// Validate checks the configuration; its errors are usage errors.
func (f Fuzz) Validate() error {
	if f.Time == "" {
		return cli.Usagef("--time needs a duration (3s, 5m, 10000x)")
	}
	return nil
}

// Run lists the targets or runs the chosen ones, each on its own with its
// output streamed; it fails at the end naming those that failed.
func (f Fuzz) Run(ctx context.Context, e Env) error {
	if err := requireCmds("go"); err != nil {
		return err
	}
	all, err := FindTargets(f.Root)
	if err != nil {
		return err
	}
	if len(all) == 0 {
		return fmt.Errorf("no fuzz targets (func Fuzz... in *_test.go) under %s", f.Root)
	}
	if f.List {
		for _, t := range all {
			fmt.Fprintln(e.Stdout, t)
		}
		return nil
	}
	run, err := Select(all, f.Names)
	if err != nil {
		return err
	}
	var failed []string
	for i, t := range run {
		e.Log.Printf("[step %d/%d] %s in %s for %s", i+1, len(run), t.Name, t.Pkg, f.Time)
		ok, err := f.runOne(ctx, e, t)
		if err != nil {
			return err
		}
		if !ok {
			failed = append(failed, fmt.Sprintf("%s (%s)", t.Name, t.Pkg))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("fuzz targets failed: %s; their inputs are under testdata/fuzz/ of each package", strings.Join(failed, " "))
	}
	e.Log.Printf("all %d fuzz targets passed (%s each)", len(run), f.Time)
	return nil
}

// runOne fuzzes t (one worker: the machine's cores are shared) from its
// module's directory. It passes when go test does, or when go test failed
// only by golang/go#75804 (warned).
func (f Fuzz) runOne(ctx context.Context, e Env, t Target) (bool, error) {
	dir, pkg := goTestDir(f.Root, t.Pkg)
	cmd := cli.Command(ctx, nil, "go", "test", "-run", "^$", "-fuzz", "^"+t.Name+"$", "-fuzztime", f.Time, "-parallel", "1", pkg)
	cmd.Dir = dir
	var scan raceScan
	out := io.MultiWriter(e.Stdout, &scan)
	cmd.Stdout, cmd.Stderr = out, out
	code, err := cli.RunCode(cmd)
	switch {
	case ctx.Err() != nil:
		return false, ctx.Err()
	case err != nil:
		return false, err
	case code == 0:
		return true, nil
	case scan.DeadlineRace():
		e.Log.Printf("warning: %s: only go's end-of-fuzztime race (golang/go#75804), no failing input: not a finding", t.Name)
		return true, nil
	}
	return false, nil
}

// fuzzFunc is a fuzz target's declaration, at the start of a line.
var fuzzFunc = regexp.MustCompile(`^func (Fuzz[A-Za-z0-9_]*)\(`)

// FindTargets finds every fuzz target under root: each `func FuzzXxx(` at
// the start of a line of a *_test.go file (directories named .git left
// out, symbolic links not followed, as grep -r finds them), sorted by
// package, then name, each once.
func FindTargets(root string) ([]Target, error) {
	var ts []Target
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), "_test.go"):
			return nil
		}
		names, err := fuzzNames(path)
		if err != nil {
			return err
		}
		pkg := "./" + filepath.ToSlash(mustRel(root, filepath.Dir(path)))
		if pkg == "./." {
			pkg = "."
		}
		for _, n := range names {
			ts = append(ts, Target{Pkg: pkg, Name: n})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("finding the fuzz targets: %w", err)
	}
	slices.SortFunc(ts, func(a, b Target) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(ts), nil
}

// fuzzNames are the fuzz targets a file declares.
func fuzzNames(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for sc.Scan() {
		if m := fuzzFunc.FindStringSubmatch(sc.Text()); m != nil {
			names = append(names, m[1])
		}
	}
	return names, sc.Err()
}

func mustRel(base, path string) string {
	rel, err := filepath.Rel(base, path)
	if err != nil {
		panic(err) // path was found under base
	}
	return rel
}

// Select returns the targets named, in the order named (every package's
// target of that name); a name no target has is a usage error. No names:
// every target.
func Select(all []Target, names []string) ([]Target, error) {
	if len(names) == 0 {
		return all, nil
	}
	var run []Target
	for _, n := range names {
		found := false
		for _, t := range all {
			if t.Name == n {
				run = append(run, t)
				found = true
			}
		}
		if !found {
			return nil, cli.Usagef("no fuzz target %s (see --list)", n)
		}
	}
	return run, nil
}

// goTestDir is where go test runs pkg (a directory relative to root, as
// FindTargets names it) from: the directory of the nearest go.mod at or
// above it within root (products/refop/server and deploy/kubernetes are modules of
// their own), and pkg relative to that.
func goTestDir(root, pkg string) (dir, rel string) {
	abs := filepath.Join(root, pkg)
	for d := abs; d != root && strings.HasPrefix(d, root+string(filepath.Separator)); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			r := mustRel(d, abs)
			if r == "." {
				return d, "."
			}
			return d, "./" + filepath.ToSlash(r)
		}
	}
	return root, pkg
}

// fuzzFailInSeed is go test's line for a seed or corpus entry that failed.
var fuzzFailInSeed = regexp.MustCompile(`--- FAIL: Fuzz[A-Za-z0-9_]*/`)

// raceScan reads go test's output as it is written, line by line, for
// DeadlineRace.
type raceScan struct {
	partial                       []byte
	deadline, written, seedFailed bool
}

func (s *raceScan) Write(p []byte) (int, error) {
	s.partial = append(s.partial, p...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		s.line(string(s.partial[:i]))
		s.partial = s.partial[i+1:]
	}
}

func (s *raceScan) line(l string) {
	s.deadline = s.deadline || l == "\tcontext deadline exceeded" || l == "    context deadline exceeded"
	s.written = s.written || strings.Contains(l, "Failing input written")
	s.seedFailed = s.seedFailed || fuzzFailInSeed.MatchString(l)
}

// DeadlineRace reports whether the output read so far is that of a run
// that failed only by go's own race at the end of a timed -fuzztime
// (golang/go#75804, unfixed in Go 1.26): a bare "context deadline
// exceeded" line, no input written, no seed failing. It says nothing of
// the target, and it comes when the machine is busy.
func (s *raceScan) DeadlineRace() bool {
	if len(s.partial) > 0 {
		s.line(string(s.partial))
		s.partial = nil
	}
	return s.deadline && !s.written && !s.seedFailed
}
