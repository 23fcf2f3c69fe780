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

// Static is the repository's static checks, scripts/test.sh's first phase:
// gofmt on every Go file, go vet in every module, bash -n and shellcheck on
// the scripts, and no pipe into grep -q in them.
type Static struct {
	Root string // the repository
}

// ShellGlobs are the scripts bash -n and shellcheck read, relative to the
// root, in this order.
func ShellGlobs() []string {
	return []string{"scripts/*.sh", "scripts/lib/*.sh", "products/*/adapter", "products/*/*.sh", "products/*/local/*.sh"}
}

// gofmtBatch is how many files one gofmt -l is given (as xargs splits).
const gofmtBatch = 500

// check is one static check: what it runs, logged before it, and how.
// run returns the finding ("" when it passed); an error is one that stops
// every check (the command could not start, an interrupt).
type check struct {
	what string
	run  func(ctx context.Context, e Env) (finding string, err error)
}

// Run runs every check, each logged as it starts, and fails at the end
// naming the findings of those that failed: one run shows every kind of
// finding. go, gofmt, bash and shellcheck must be on PATH.
func (s Static) Run(ctx context.Context, e Env) error {
	if err := requireCmds("go", "gofmt", "bash", "shellcheck"); err != nil {
		return err
	}
	checks, err := s.checks()
	if err != nil {
		return err
	}
	var failed []string
	for i, c := range checks {
		e.Log.Printf("[step %d/%d] %s", i+1, len(checks), c.what)
		finding, err := c.run(ctx, e)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return err
		case finding != "":
			failed = append(failed, finding)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("static checks failed: %s", strings.Join(failed, "; "))
	}
	e.Log.Printf("all %d static checks passed", len(checks))
	return nil
}

// checks are the checks of the tree as it is now: gofmt, go vet per
// module, bash -n, shellcheck.
func (s Static) checks() ([]check, error) {
	goFiles, modules, err := walkGo(s.Root)
	if err != nil {
		return nil, err
	}
	scripts, err := shellFiles(s.Root)
	if err != nil {
		return nil, err
	}
	cs := []check{{fmt.Sprintf("gofmt -l on the %d *.go files of the tree", len(goFiles)),
		func(ctx context.Context, e Env) (string, error) { return s.gofmt(ctx, e, goFiles) }}}
	for _, m := range modules {
		cs = append(cs, check{"go vet ./... in " + moduleName(m),
			func(ctx context.Context, e Env) (string, error) { return s.vet(ctx, e, m) }})
	}
	list := strings.Join(ShellGlobs(), " ")
	return append(cs,
		check{fmt.Sprintf("bash -n on %s (%d files)", list, len(scripts)),
			func(ctx context.Context, e Env) (string, error) { return s.bashN(ctx, e, scripts) }},
		check{fmt.Sprintf("shellcheck -x on %s (%d files)", list, len(scripts)),
			func(ctx context.Context, e Env) (string, error) { return s.shellcheck(ctx, e, scripts) }},
		check{fmt.Sprintf("no `| grep -q` in %s (%d files)", list, len(scripts)),
			func(context.Context, Env) (string, error) { return s.quietGrep(scripts) }},
	), nil
}

// quietGrepRE is a pipe into grep -q (-q among other flags too, or
// --quiet): under the scripts' pipefail, grep's exit at its first match
// can kill the writer with SIGPIPE, and the pipeline then fails although
// it matched (CI saw `printf ... | grep -qxF` call a known scenario
// unknown). Test a variable or a command's captured output instead.
var quietGrepRE = regexp.MustCompile(`\|\s*grep\s+(-[A-Za-z]*q|--quiet)`)

// quietGrep names every script line (not a comment) that pipes into grep -q.
func (s Static) quietGrep(scripts []string) (string, error) {
	var found []string
	for _, f := range scripts {
		b, err := os.ReadFile(filepath.Join(s.Root, f))
		if err != nil {
			return "", err
		}
		for i, l := range strings.Split(string(b), "\n") {
			if t := strings.TrimSpace(l); !strings.HasPrefix(t, "#") && quietGrepRE.MatchString(t) {
				found = append(found, fmt.Sprintf("%s:%d", f, i+1))
			}
		}
	}
	if len(found) > 0 {
		return "a pipe into grep -q (SIGPIPE under pipefail) at " + strings.Join(found, " "), nil
	}
	return "", nil
}

// command runs argv in the root's directory dir (relative), its stdout to
// stdout and its stderr to e.Stderr, and returns its exit code.
func (s Static) command(ctx context.Context, e Env, dir string, stdout io.Writer, argv ...string) (int, error) {
	cmd := cli.Command(ctx, nil, argv...)
	cmd.Dir = filepath.Join(s.Root, dir)
	cmd.Stdout, cmd.Stderr = stdout, e.Stderr
	return cli.RunCode(cmd)
}

// gofmt lists the files gofmt would change, a batch of files at a time;
// gofmt's own errors (a file it cannot parse) go to stderr.
func (s Static) gofmt(ctx context.Context, e Env, files []string) (string, error) {
	var changed []string
	broken := false
	for batch := range slices.Chunk(files, gofmtBatch) {
		var out bytes.Buffer
		code, err := s.command(ctx, e, ".", &out, append([]string{"gofmt", "-l"}, batch...)...)
		if err != nil {
			return "", err
		}
		broken = broken || code != 0
		changed = append(changed, lines(out.String())...)
	}
	switch {
	case broken:
		return fmt.Sprintf("gofmt failed (its errors above); it would change: %s", orNone(changed)), nil
	case len(changed) > 0:
		return "gofmt would change: " + strings.Join(changed, " "), nil
	}
	return "", nil
}

// lines are the non-empty lines of out.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" {
			ls = append(ls, l)
		}
	}
	return ls
}

func orNone(files []string) string {
	if len(files) == 0 {
		return "none listed"
	}
	return strings.Join(files, " ")
}

// vet runs go vet ./... in module, its report streamed.
func (s Static) vet(ctx context.Context, e Env, module string) (string, error) {
	code, err := s.command(ctx, e, module, e.Stdout, "go", "vet", "./...")
	if err != nil || code == 0 {
		return "", err
	}
	return fmt.Sprintf("go vet ./... failed in %s (its report above)", moduleName(module)), nil
}

// moduleName is how a module's directory is logged.
func moduleName(dir string) string {
	if dir == "." {
		return "the root"
	}
	return dir
}

// bashN parses each script with bash -n, one at a time, its errors
// streamed.
func (s Static) bashN(ctx context.Context, e Env, scripts []string) (string, error) {
	var bad []string
	for _, f := range scripts {
		code, err := s.command(ctx, e, ".", e.Stdout, "bash", "-n", f)
		if err != nil {
			return "", err
		}
		if code != 0 {
			bad = append(bad, f)
		}
	}
	if len(bad) > 0 {
		return "syntax error in " + strings.Join(bad, " "), nil
	}
	return "", nil
}

// shellcheck analyses the scripts at shellcheck's default severity (style
// and up), following every source, its report on stderr; it logs
// shellcheck's version when there is nothing to report.
func (s Static) shellcheck(ctx context.Context, e Env, scripts []string) (string, error) {
	code, err := s.command(ctx, e, ".", e.Stderr, append([]string{"shellcheck", "-x"}, scripts...)...)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return "shellcheck reports findings in scripts/ (above)", nil
	}
	var out bytes.Buffer
	version := "(version unknown)"
	if code, err := s.command(ctx, e, ".", &out, "shellcheck", "--version"); err == nil && code == 0 {
		if v := ShellcheckVersion(out.String()); v != "" {
			version = v
		}
	}
	e.Log.Printf("ok: shellcheck %s: nothing to report in the scripts", version)
	return "", nil
}

// ShellcheckVersion is the version in shellcheck --version's output (its
// "version: X" line), "" without one.
func ShellcheckVersion(out string) string {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "version: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// walkGo finds, under root, every *.go file that is a regular file (as
// "./path", sorted) and every module: each directory holding a go.mod
// ("." for the root, else relative), leaving out those go itself ignores
// (testdata, names starting with . or _), whose go.mod is a fixture.
// Directories named .git are left out of both.
func walkGo(root string) (files, modules []string, err error) {
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(mustRel(root, path))
		switch {
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case !d.Type().IsRegular():
		case strings.HasSuffix(d.Name(), ".go"):
			files = append(files, "./"+rel)
		case d.Name() == "go.mod" && !goIgnored(filepath.Dir(rel)):
			modules = append(modules, filepath.Dir(rel))
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("finding the Go files: %w", err)
	}
	slices.Sort(files)
	slices.Sort(modules) // "." first
	return files, modules, nil
}

// goIgnored reports whether a directory (relative, slash-separated) is
// one that go's ./... leaves out: testdata, or a name starting with . or _.
func goIgnored(dir string) bool {
	if dir == "." {
		return false
	}
	for _, el := range strings.Split(dir, "/") {
		if el == "testdata" || strings.HasPrefix(el, ".") || strings.HasPrefix(el, "_") {
			return true
		}
	}
	return false
}

// shellFiles are the scripts ShellGlobs match, relative to root, each glob's
// matches sorted; none at all is an error (the checks would pass vacuously).
func shellFiles(root string) ([]string, error) {
	var files []string
	for _, g := range ShellGlobs() {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			return nil, err
		}
		for _, p := range m {
			files = append(files, filepath.ToSlash(mustRel(root, p)))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no scripts (%s) under %s", strings.Join(ShellGlobs(), " "), root)
	}
	return files, nil
}
