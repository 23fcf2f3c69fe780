package devtest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shellcheckVersionOut is shellcheck 0.9.0's --version.
const shellcheckVersionOut = "ShellCheck - shell script analysis tool\nversion: 0.9.0\nlicense: GNU General Public License, version 3\nwebsite: https://www.shellcheck.net\n"

// passing are stand-ins for the static checks' commands that find nothing.
func passing() map[string]string {
	return map[string]string{
		"gofmt":      "exit 0\n",
		"go":         "exit 0\n",
		"bash":       "exit 0\n",
		"shellcheck": `[ "$1" = --version ] && printf '` + strings.ReplaceAll(shellcheckVersionOut, "\n", `\n`) + "'\nexit 0\n",
	}
}

// fakeTools puts stand-ins first on PATH (or alone on it, with alone):
// each appends its name, directory and arguments to root/calls, then runs
// its script (sh, using no command of PATH).
func fakeTools(t *testing.T, root string, scripts map[string]string, alone bool) {
	bin := t.TempDir()
	for name, script := range scripts {
		write(t, bin, name, "#!/bin/sh\necho \""+name+" $PWD $*\" >>"+filepath.Join(root, "calls")+"\n"+script)
	}
	path := bin
	if !alone {
		path += string(os.PathListSeparator) + os.Getenv("PATH")
	}
	t.Setenv("PATH", path)
}

// staticTree is a repository with two modules (and a fixture's go.mod
// under testdata), Go files, a .git, and scripts in each of ShellGlobs.
func staticTree(t *testing.T) string {
	root := repo(t)
	for _, f := range []string{"a.go", "internal/x/b.go", ".git/c.go", "deploy/m/d.go", "internal/x/testdata/fix/e.go", "deploy/m/.git/f.go"} {
		write(t, root, f, "package p\n")
	}
	write(t, root, "deploy/m/go.mod", "module example.com/m\n")
	write(t, root, "internal/x/testdata/fix/go.mod", "module example.com/fix\n")
	write(t, root, "_old/go.mod", "module example.com/old\n")
	for _, f := range []string{"scripts/run.sh", "scripts/lib/common.sh", "products/refop/adapter"} {
		write(t, root, f, "#!/usr/bin/env bash\n")
	}
	write(t, root, "scripts/README.md", "not a script\n")
	if err := os.Symlink(filepath.Join(root, "a.go"), filepath.Join(root, "internal/x/link.go")); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestStaticClean: a clean tree passes; every check ran as expected, from
// the root (go vet from each module), and shellcheck's version is logged.
func TestStaticClean(t *testing.T) {
	root := staticTree(t)
	fakeTools(t, root, passing(), false)
	e, out, log := testEnv()
	if err := (Static{Root: root}).Run(context.Background(), e); err != nil {
		t.Fatalf("Run: %v\n%s", err, log)
	}
	want := []string{
		"gofmt|" + root + "|-l|./a.go|./deploy/m/d.go|./internal/x/b.go|./internal/x/testdata/fix/e.go",
		"go|" + root + "|vet|./...",
		"go|" + filepath.Join(root, "deploy/m") + "|vet|./...",
		"bash|" + root + "|-n|scripts/run.sh",
		"bash|" + root + "|-n|scripts/lib/common.sh",
		"bash|" + root + "|-n|products/refop/adapter",
		"shellcheck|" + root + "|-x|scripts/run.sh|scripts/lib/common.sh|products/refop/adapter",
		"shellcheck|" + root + "|--version",
	}
	if got := calls(t, root); !slices.Equal(got, want) {
		t.Errorf("ran\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, w := range []string{
		"[step 1/6] gofmt -l on the 4 *.go files of the tree",
		"[step 2/6] go vet ./... in the root",
		"[step 3/6] go vet ./... in deploy/m",
		"[step 4/6] bash -n on scripts/*.sh scripts/lib/*.sh products/*/adapter products/*/*.sh products/*/local/*.sh (3 files)",
		"[step 5/6] shellcheck -x on scripts/*.sh scripts/lib/*.sh products/*/adapter products/*/*.sh products/*/local/*.sh (3 files)",
		"[step 6/6] no `| grep -q` in scripts/*.sh scripts/lib/*.sh products/*/adapter products/*/*.sh products/*/local/*.sh (3 files)",
		"t: ok: shellcheck 0.9.0: nothing to report in the scripts\n",
		"t: all 6 static checks passed\n",
	} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, log)
		}
	}
	if out.Len() != 0 {
		t.Errorf("stdout: %q", out)
	}
}

// TestStaticFindings: each kind of finding fails, named; every check runs
// whatever an earlier one found, so all of them at once are all named.
func TestStaticFindings(t *testing.T) {
	findings := []struct {
		tool, script, want string
	}{
		{"gofmt", "echo ./internal/x/b.go; echo ./a.go\n", "gofmt would change: ./internal/x/b.go ./a.go"},
		{"go", `case "$PWD" in */deploy/m) echo 'd.go:1: vet finding' >&2; exit 1 ;; esac` + "\n", "go vet ./... failed in deploy/m (its report above)"},
		{"bash", `[ "$2" = scripts/lib/common.sh ] && { echo 'scripts/lib/common.sh: line 1: syntax error' >&2; exit 2; }; exit 0` + "\n",
			"syntax error in scripts/lib/common.sh"},
		{"shellcheck", `[ "$1" = --version ] && exit 0; echo 'In scripts/run.sh line 1: SC2086'; exit 1` + "\n",
			"shellcheck reports findings in scripts/ (above)"},
	}
	all := passing()
	var wants []string
	for _, f := range findings {
		root := staticTree(t)
		tools := passing()
		tools[f.tool] = f.script
		fakeTools(t, root, tools, false)
		e, _, log := testEnv()
		err := (Static{Root: root}).Run(context.Background(), e)
		if err == nil || err.Error() != "static checks failed: "+f.want {
			t.Errorf("%s finding: %v; want %q", f.tool, err, f.want)
		}
		if n := len(calls(t, root)); n < 7 {
			t.Errorf("%s finding: %d commands ran; every check should have", f.tool, n)
		}
		if strings.Contains(log.String(), "all 6 static checks passed") {
			t.Errorf("%s finding: logged as passing:\n%s", f.tool, log)
		}
		all[f.tool] = f.script
		wants = append(wants, f.want)
	}

	root := staticTree(t)
	fakeTools(t, root, all, false)
	e, out, log := testEnv()
	err := (Static{Root: root}).Run(context.Background(), e)
	if want := "static checks failed: " + strings.Join(wants, "; "); err == nil || err.Error() != want {
		t.Errorf("every finding: %v; want %q", err, want)
	}
	if strings.Contains(log.String(), "ok: shellcheck") || !strings.Contains(log.String(), "In scripts/run.sh line 1: SC2086") {
		t.Errorf("shellcheck's report is not on stderr, or its findings are logged as none:\n%s", log)
	}
	if strings.Contains(out.String(), "SC2086") {
		t.Errorf("shellcheck's report on stdout: %q", out)
	}
}

// TestStaticQuietGrep: a pipe into grep -q (any flags with q, or
// --quiet) in a script is a finding naming its file and line; one in a
// comment, and a captured output tested instead, are not.
func TestStaticQuietGrep(t *testing.T) {
	root := staticTree(t)
	write(t, root, "scripts/run.sh", "#!/usr/bin/env bash\n# a comment: printf x | grep -q x\n[[ -n \"$(docker ps -q)\" ]]\n"+
		"if printf '%s\\n' \"${a[@]}\" | grep -qxF -- \"$1\"; then :; fi\n")
	write(t, root, "products/refop/adapter", "#!/usr/bin/env bash\nls | grep --quiet x && :\nls | grep -c x\n")
	fakeTools(t, root, passing(), false)
	e, _, _ := testEnv()
	err := (Static{Root: root}).Run(context.Background(), e)
	want := "static checks failed: a pipe into grep -q (SIGPIPE under pipefail) at scripts/run.sh:4 products/refop/adapter:2"
	if err == nil || err.Error() != want {
		t.Errorf("Run: %v; want %q", err, want)
	}
}

// TestStaticGofmtError: a file gofmt cannot parse fails the check.
func TestStaticGofmtError(t *testing.T) {
	root := staticTree(t)
	tools := passing()
	tools["gofmt"] = "echo './a.go:1:1: expected package' >&2; exit 2\n"
	fakeTools(t, root, tools, false)
	e, _, log := testEnv()
	err := (Static{Root: root}).Run(context.Background(), e)
	if err == nil || err.Error() != "static checks failed: gofmt failed (its errors above); it would change: none listed" {
		t.Errorf("Run: %v", err)
	}
	if !strings.Contains(log.String(), "expected package") {
		t.Errorf("gofmt's error is not on stderr:\n%s", log)
	}
}

// TestStaticMissing: a command missing from PATH is named, and nothing runs;
// a tree without scripts is an error, not a pass.
func TestStaticMissing(t *testing.T) {
	for _, missing := range []string{"go", "gofmt", "bash", "shellcheck"} {
		root := staticTree(t)
		tools := passing()
		delete(tools, missing)
		fakeTools(t, root, tools, true)
		e, _, _ := testEnv()
		err := (Static{Root: root}).Run(context.Background(), e)
		if err == nil || err.Error() != "required command not found: "+missing {
			t.Errorf("without %s: %v", missing, err)
		}
		if c := calls(t, root); len(c) != 0 {
			t.Errorf("without %s, ran %v", missing, c)
		}
	}

	root := repo(t)
	fakeTools(t, root, passing(), true)
	e, _, _ := testEnv()
	if err := (Static{Root: root}).Run(context.Background(), e); err == nil || !strings.Contains(err.Error(), "no scripts (scripts/*.sh") {
		t.Errorf("a tree without scripts: %v", err)
	}
}

func TestShellcheckVersion(t *testing.T) {
	for out, want := range map[string]string{
		shellcheckVersionOut:  "0.9.0",
		"version: 0.10.0\r\n": "0.10.0",
		"ShellCheck\n":        "",
		"  version: 1.0\n":    "",
		"":                    "",
	} {
		if got := ShellcheckVersion(out); got != want {
			t.Errorf("ShellcheckVersion(%q) = %q, want %q", out, got, want)
		}
	}
}
