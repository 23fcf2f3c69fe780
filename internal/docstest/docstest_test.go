package docstest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/run"
)

func root(t *testing.T) string {
	t.Helper()
	r, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func docs(t *testing.T) []Doc {
	t.Helper()
	d, err := Load(root(t))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSimple(t *testing.T) {
	for _, c := range []struct {
		text string
		want [][]string
	}{
		{"loadstep --url http://x -c 16 -o s.json && aggregate summary s.json",
			[][]string{{"loadstep", "--url", "http://x", "-c", "16", "-o", "s.json"}, {"aggregate", "summary", "s.json"}}},
		{"sampler --match 'hydra|java' -o samples.jsonl & # a comment --nope\nx",
			[][]string{{"sampler", "--match", "hydra|java", "-o", "samples.jsonl"}, {"x"}}},
		{"IDPBENCH_OIDC_CONFIG=my.env scripts/run-comparison.sh \\\n  --quick --only oidc",
			[][]string{{"IDPBENCH_OIDC_CONFIG=my.env", "scripts/run-comparison.sh", "--quick", "--only", "oidc"}}},
		{`at=$(date -u -d '+5 sec' --iso-8601=seconds); for i in 0 1; do loadstep --segment "$i/3" -o "a-$i.json" & done; wait`,
			[][]string{{"at=$(date -u -d '+5 sec' --iso-8601=seconds)"}, {"for", "i", "in", "0", "1"}, {"do", "loadstep", "--segment", "$i/3", "-o", "a-$i.json"}, {"done"}, {"wait"}}},
		{"scripts/bench.sh -c 16 --raw b.jsonl >results/bench/bench.md 2>&1",
			[][]string{{"scripts/bench.sh", "-c", "16", "--raw", "b.jsonl"}}},
		{"aggregate compare a b > out.md", [][]string{{"aggregate", "compare", "a", "b"}}},
	} {
		if got := Simple(c.text); !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("Simple(%q) =\n%q\nwant\n%q", c.text, got, c.want)
		}
	}
	if got := Command([]string{"do", "A=1", "exec", "loadstep", "-c", "1"}); !slices.Equal(got, []string{"loadstep", "-c", "1"}) {
		t.Errorf("Command: %q", got)
	}
}

// TestCommands: the command lines of a doc are found in fenced and
// indented blocks and in inline spans, tools by name, path or go run,
// scripts by path; a yaml block, output lines and other programs are not.
func TestCommands(t *testing.T) {
	doc := Doc{Path: "x.md", Text: "Run `aggregate report DIR\n  -o F` or `scripts/test.sh --unit`.\n\n" +
		"    go run ./cmd/provision oidc check --config my.env\n    bin/aggregate compare a b\n\n" +
		"```yaml\nloadstep: --nope\n```\n\n```sh\n# loadstep in a comment\nsampler: self CPU 0.1 s\ngo test ./...\nloadstep --url u \\\n  -c 2\n```\n" +
		"| `mintpool --emit x` | y |\n"}
	var got []string
	for _, c := range Commands([]Doc{doc}, []string{"aggregate", "provision", "loadstep", "sampler", "mintpool"}, []string{"scripts/test.sh"}) {
		got = append(got, c.Where+" "+c.Name+" "+strings.Join(c.Args, " "))
	}
	want := []string{"x.md:1 aggregate report DIR -o F", "x.md:2 scripts/test.sh --unit", "x.md:4 provision oidc check --config my.env",
		"x.md:5 aggregate compare a b", "x.md:15 loadstep --url u -c 2", "x.md:18 mintpool --emit x"}
	if !slices.Equal(got, want) {
		t.Errorf("commands\n%q\nwant\n%q", got, want)
	}
}

func TestFlagsAndSplit(t *testing.T) {
	help := "Usage: x\n\n  -c, --connections int   counts\n      --fresh             start over\n" +
		"  --driver-cpus LIST, --server-cpus LIST\n                 pin them (loadstep's --not-this)\n"
	got := Flags(help)
	for _, f := range []string{"-c", "--connections", "--fresh", "--driver-cpus", "--server-cpus", "--help", "-h", "--version"} {
		if !got[f] {
			t.Errorf("Flags: no %s in %v", f, got)
		}
	}
	if got["--not-this"] {
		t.Errorf("Flags took a flag from a description: %v", got)
	}
	pos, flags := split([]string{"report", "results/x", "-o", "-", "[--quick]", "--title=T", "extra", "--", "--other"})
	if !slices.Equal(pos, []string{"report", "results/x"}) || !slices.Equal(flags, []string{"-o", "--quick", "--title"}) {
		t.Errorf("split: %q %q", pos, flags)
	}
}

// runTool is the run tool in-process (scripts/run-comparison.sh's): its
// help and usage errors need no environment.
var runTool = Tool{Name: "run", Hint: run.HelpName, Run: func(args []string, stdout, stderr io.Writer) int {
	return run.Main(context.Background(), args, run.Env{Stdout: stdout, Stderr: stderr, Getenv: func(string) string { return "" },
		Now: time.Now, Started: time.Now(), Pid: os.Getpid()})
}}

// TestDrift: the checks fail on a drift of the docs from the code: a flag
// renamed in a README command, a function renamed in design.md, a link to a
// heading that moved, a file path that is gone. Each on a doctored copy of
// the real doc, which passes undoctored.
func TestDrift(t *testing.T) {
	r := root(t)
	all := docs(t)
	readme := all[slices.IndexFunc(all, func(d Doc) bool { return d.Path == "README.md" })]
	design := all[slices.IndexFunc(all, func(d Doc) bool { return d.Path == "docs/design.md" })]
	tools, scripts := []string{"run"}, []string{"scripts/run-comparison.sh"}
	if bad := runTool.CheckCommands(Commands([]Doc{readme}, tools, scripts)); len(bad) > 0 {
		t.Fatalf("README.md as it is: %q", bad)
	}
	doctored := readme
	doctored.Text = strings.Replace(readme.Text, "scripts/run-comparison.sh --only hydra,keycloak", "scripts/run-comparison.sh --products hydra,keycloak", 1)
	if doctored.Text == readme.Text {
		t.Fatal("README.md has no `scripts/run-comparison.sh --only hydra,keycloak` to doctor")
	}
	bad := runTool.CheckCommands(Commands([]Doc{doctored}, tools, scripts))
	if len(bad) != 1 || !strings.Contains(bad[0], "run has no flag --products") {
		t.Errorf("a renamed flag in README.md: %q; want one problem naming --products", bad)
	}
	decls, err := ReadDecls(r)
	if err != nil {
		t.Fatal(err)
	}
	if bad := CheckIdents([]Doc{design}, decls); len(bad) > 0 {
		t.Fatalf("design.md as it is: %q", bad)
	}
	doctored = design
	doctored.Text = strings.Replace(design.Text, "`steps.Merge`", "`steps.MergeAll`", 1)
	if doctored.Text == design.Text {
		t.Fatal("design.md names no `steps.Merge` to doctor")
	}
	if bad := CheckIdents([]Doc{doctored}, decls); len(bad) != 1 || !strings.Contains(bad[0], "package steps declares no MergeAll") {
		t.Errorf("a renamed function in design.md: %q; want one problem naming steps.MergeAll", bad)
	}
	doctored = readme
	doctored.Text = strings.Replace(readme.Text, "](docs/own-idp.md)", "](docs/own-idp.md#no-such-heading)", 1) +
		"\nSee `internal/nosuch/file.go`.\n"
	bad = CheckPaths(r, []Doc{doctored})
	has := func(s string) bool {
		return slices.ContainsFunc(bad, func(b string) bool { return strings.Contains(b, s) })
	}
	if len(bad) != 2 || !has("link docs/own-idp.md#no-such-heading: no heading #no-such-heading") || !has("`internal/nosuch/file.go`: no such file") {
		t.Errorf("a broken link and a path gone: %q; want the two", bad)
	}
}

// TestIdentsAndPaths: every backquoted package.Name of the docs is
// declared, every backquoted path and every relative link exists.
func TestIdentsAndPaths(t *testing.T) {
	r := root(t)
	all := docs(t)
	decls, err := ReadDecls(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range append(CheckIdents(all, decls), CheckPaths(r, all)...) {
		t.Error(b)
	}
}

// TestEveryToolChecked: every tool of cmd/ has its TestDocs, which runs
// Check on it under its own name.
func TestEveryToolChecked(t *testing.T) {
	r := root(t)
	tools, err := Tools(r)
	if err != nil || len(tools) == 0 {
		t.Fatalf("tools: %q (%v)", tools, err)
	}
	for _, name := range tools {
		b, err := os.ReadFile(filepath.Join(r, "cmd", name, "docs_test.go"))
		if err != nil || !strings.Contains(string(b), `docstest.Check(t, docstest.Tool{Name: "`+name+`"`) {
			t.Errorf("cmd/%s/docs_test.go: no TestDocs calling docstest.Check(t, docstest.Tool{Name: %q, ...}) (%v)", name, name, err)
		}
	}
}

// shellScripts are the scripts that parse their own arguments (not
// Wrappers): their help is their header (script_help).
func shellScripts(t *testing.T) []string {
	scripts, err := Scripts(root(t))
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(scripts, func(s string) bool { _, ok := Wrappers[s]; return ok })
}

// TestWrappers: each wrapper runs the tool it is said to, with the
// arguments said; every other script parses its own and answers --help
// with script_help.
func TestWrappers(t *testing.T) {
	r := root(t)
	for s, w := range Wrappers {
		b, err := os.ReadFile(filepath.Join(r, s))
		// the tool, its subcommand, then (the script's own arguments, as
		// bench.sh's paths) the user's last
		want := `"$(tool ` + w[0] + `)"` + strings.Join(append([]string{""}, w[1:]...), " ")
		runs := false
		for _, l := range strings.Split(string(b), "\n") {
			l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "exec "))
			runs = runs || strings.HasPrefix(l, want) && strings.HasSuffix(l, `"$@"`)
		}
		if err != nil || !runs {
			t.Errorf("%s does not run %s ... \"$@\" (%v)", s, want, err)
		}
	}
	for _, s := range shellScripts(t) {
		if b, err := os.ReadFile(filepath.Join(r, s)); err != nil || !strings.Contains(string(b), "script_help") {
			t.Errorf("%s: neither a wrapper of a tool (Wrappers) nor answering --help with script_help (%v)", s, err)
		}
	}
}

// caseRe is a case pattern of a script's arguments: -x | --name).
var caseRe = regexp.MustCompile(`(?m)^\s*((?:-[-A-Za-z0-9=*]+)(?:\s*\|\s*-[-A-Za-z0-9=*]+)*)\)`)

// scriptFlags are the flags a script's own argument parsing takes (its
// case patterns), with --version (script_version).
func scriptFlags(text string) map[string]bool {
	out := map[string]bool{"--version": true}
	for _, m := range caseRe.FindAllStringSubmatch(text, -1) {
		for _, f := range strings.Split(m[1], "|") {
			out[strings.TrimSuffix(strings.TrimSpace(f), "=*")] = true
		}
	}
	return out
}

// TestScriptCommands: every command line of the docs that names a script
// parsing its own arguments uses only the flags it takes.
func TestScriptCommands(t *testing.T) {
	r := root(t)
	scripts := shellScripts(t)
	for _, c := range Commands(docs(t), nil, scripts) {
		b, err := os.ReadFile(filepath.Join(r, c.Name))
		if err != nil {
			t.Fatal(err)
		}
		known := scriptFlags(string(b))
		_, flags := split(c.Args)
		for _, f := range flags {
			if !known[f] {
				t.Errorf("%s: `%s`: %s takes no %s", c.Where, c.Text, c.Name, f)
			}
		}
	}
}

// script runs a script from the root with env added, as a user would.
func script(t *testing.T, env []string, name string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command("bash", append([]string{name}, args...)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root(t), &out, &errb
	cmd.Env = append(os.Environ(), env...)
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("%s: %v", name, err)
	}
	return code, out.String(), errb.String()
}

// TestScriptsAlike: every script a user runs answers --version with its
// name and the tree's revision and --help on stdout, exit 0, without
// building anything (a wrapper's help is its tool's: here a stand-in's);
// run-comparison.sh's help is the run tool's, at once; a script that parses
// its own arguments refuses one it does not take with exit 2, nothing on
// stdout, and the hint.
func TestScriptsAlike(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	bin := t.TempDir()
	for _, name := range []string{"run", "ladder", "gcjitter", "bench", "k8sstep", "devtest", "experiment"} {
		stub := "#!/bin/sh\necho \"stand-in " + name + " $*\"\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"IDPBENCH_NO_BUILD=1", "IDPBENCH_BIN=" + bin}
	// The run tool's help as the registry's (run.TestHelpFile holds the file to it).
	runHelp, err := os.ReadFile(filepath.Join(root(t), run.HelpFile))
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := Scripts(root(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		code, stdout, stderr := script(t, env, s, "--version")
		if code != 0 || !regexp.MustCompile(`^`+regexp.QuoteMeta(filepath.Base(s))+` \S+\n$`).MatchString(stdout) || strings.Contains(stderr, "building") {
			t.Errorf("%s --version: exit %d, stdout %q, stderr %q; want \"%s REVISION\", exit 0, nothing built", s, code, stdout, stderr, filepath.Base(s))
		}
		code, stdout, stderr = script(t, env, s, "--help")
		w, wraps := Wrappers[s]
		switch {
		case code != 0 || stdout == "":
			t.Errorf("%s --help: exit %d, stdout %q, stderr %q; want its help on stdout, exit 0", s, code, stdout, stderr)
		case s == "scripts/run-comparison.sh":
			if stdout != string(runHelp) || stderr != "" {
				t.Errorf("%s --help: stderr %q, stdout not the run tool's help: %q", s, stderr, stdout)
			}
		case wraps && !strings.Contains(stdout, "stand-in "+strings.Join(append(slices.Clone(w), "--help"), " ")):
			t.Errorf("%s --help: stdout %q; want the help of %s", s, stdout, strings.Join(w, " "))
		case !wraps && !exitsRe.MatchString(stdout):
			t.Errorf("%s --help does not list its exit codes: %q", s, stdout)
		}
		if wraps {
			continue
		}
		code, stdout, stderr = script(t, env, s, "--no-such-flag")
		if want := "Try '" + s + " --help'.\n"; code != 2 || stdout != "" || !strings.HasSuffix(stderr, want) {
			t.Errorf("%s --no-such-flag: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout, the hint %q", s, code, stdout, stderr, want)
		}
	}
}
