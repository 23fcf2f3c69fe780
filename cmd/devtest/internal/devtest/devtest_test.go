package devtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/cli"
)

// write creates root/rel with content, and its directories.
func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// repo is a temp tree holding the module's go.mod.
func repo(t *testing.T) string {
	root := t.TempDir()
	write(t, root, "go.mod", "module "+Module+"\n\ngo 1.26.0\n")
	return root
}

func TestRoot(t *testing.T) {
	root := repo(t)
	write(t, root, "deploy/refop/go.mod", "module github.com/idpbench/idpbench/deploy/refop // its own\n")
	write(t, root, "deploy/refop/cmd/x.go", "package main\n")
	for _, from := range []string{root, filepath.Join(root, "deploy/refop"), filepath.Join(root, "deploy/refop/cmd")} {
		if got, err := rootFrom(from); err != nil || got != root {
			t.Errorf("rootFrom(%s) = %q, %v; want %s", from, got, err, root)
		}
	}
	if got, err := rootFrom(t.TempDir()); err == nil {
		t.Errorf("rootFrom(a tree without the module) = %q, want an error", got)
	}
	if got, err := Root(root); err != nil || got != root {
		t.Errorf("Root(%s) = %q, %v", root, got, err)
	}
	_, err := Root(filepath.Join(root, "deploy/refop"))
	if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "--root") {
		t.Errorf("Root(deploy/refop) = %v; want a usage error naming --root", err)
	}
}

func TestFindTargets(t *testing.T) {
	root := repo(t)
	write(t, root, "internal/b/b_test.go", "package b\n\nfunc FuzzZeta(f *testing.F) {}\nfunc FuzzAlpha(f *testing.F) {}\n  func FuzzIndented(f *testing.F) {}\n// func FuzzComment(f *testing.F) {}\nfunc TestX(t *testing.T) {}\n")
	write(t, root, "internal/b/more_test.go", "package b\nfunc FuzzAlpha(f *testing.F) {}\nfunc Fuzz_2(f *testing.F) {}\n")
	write(t, root, "internal/b/b.go", "package b\nfunc FuzzNotATest(f *testing.F) {}\n")
	write(t, root, "internal/a/a_test.go", "package a\nfunc FuzzA(f *testing.F) {}")
	write(t, root, "root_test.go", "package idpbench\nfunc FuzzRoot(f *testing.F) {}\n")
	write(t, root, ".git/x_test.go", "func FuzzGit(f *testing.F) {}\n")
	write(t, root, "deploy/m/.git/y_test.go", "func FuzzGit(f *testing.F) {}\n")
	write(t, root, "deploy/m/go.mod", "module example.com/m\n")
	write(t, root, "deploy/m/p/p_test.go", "package p\nfunc FuzzMod(f *testing.F) {}\n")
	if err := os.Symlink(filepath.Join(root, "internal/a/a_test.go"), filepath.Join(root, "internal/b/link_test.go")); err != nil {
		t.Fatal(err)
	}
	got, err := FindTargets(root)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, tg := range got {
		lines = append(lines, tg.String())
	}
	want := []string{". FuzzRoot", "./deploy/m/p FuzzMod", "./internal/a FuzzA", "./internal/b FuzzAlpha", "./internal/b FuzzZeta", "./internal/b Fuzz_2"}
	if !slices.Equal(lines, want) {
		t.Errorf("FindTargets:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestGoTestDir(t *testing.T) {
	root := repo(t)
	write(t, root, "deploy/m/go.mod", "module example.com/m\n")
	write(t, root, "deploy/m/p/p_test.go", "package p\n")
	write(t, root, "internal/load/x_test.go", "package load\n")
	for _, c := range []struct{ pkg, dir, rel string }{
		{"./internal/load", root, "./internal/load"},
		{".", root, "."},
		{"./deploy/m/p", filepath.Join(root, "deploy/m"), "./p"},
		{"./deploy/m", filepath.Join(root, "deploy/m"), "."},
	} {
		if dir, rel := goTestDir(root, c.pkg); dir != c.dir || rel != c.rel {
			t.Errorf("goTestDir(%s) = %s, %s; want %s, %s", c.pkg, dir, rel, c.dir, c.rel)
		}
	}
}

func TestSelect(t *testing.T) {
	all := []Target{{"./a", "FuzzA"}, {"./b", "FuzzB"}, {"./c", "FuzzA"}}
	got, err := Select(all, []string{"FuzzB", "FuzzA"})
	if want := []Target{{"./b", "FuzzB"}, {"./a", "FuzzA"}, {"./c", "FuzzA"}}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Select(FuzzB FuzzA) = %v, %v; want %v", got, err, want)
	}
	if got, err := Select(all, nil); err != nil || !slices.Equal(got, all) {
		t.Errorf("Select() = %v, %v; want all", got, err)
	}
	_, err = Select(all, []string{"FuzzA", "FuzzNope"})
	if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "no fuzz target FuzzNope") {
		t.Errorf("Select(FuzzNope) = %v; want a usage error naming it", err)
	}
}

// raceOutput is a run that golang/go#75804 failed: the fuzzing went well,
// then go's worker coordination lost a race with -fuzztime's deadline.
const raceOutput = `fuzz: elapsed: 0s, gathering baseline coverage: 0/212 completed
fuzz: elapsed: 0s, gathering baseline coverage: 212/212 completed, now fuzzing with 1 workers
fuzz: elapsed: 3s, execs: 164025 (54668/sec), new interesting: 2 (total: 214)
--- FAIL: FuzzMember (3.02s)
	context deadline exceeded
FAIL
exit status 1
FAIL	github.com/idpbench/idpbench/internal/load	3.100s
`

func TestDeadlineRace(t *testing.T) {
	for _, c := range []struct {
		name, out string
		want      bool
	}{
		{"the race, tab", raceOutput, true},
		{"the race, spaces", strings.Replace(raceOutput, "\tcontext", "    context", 1), true},
		{"the race, no final newline", "--- FAIL: FuzzX (3.0s)\n\tcontext deadline exceeded", true},
		{"an input written", strings.Replace(raceOutput, "FAIL\n", "    Failing input written to testdata/fuzz/FuzzMember/582528ddfad69eb5\n    To re-run:\nFAIL\n", 1), false},
		{"a seed failing", strings.Replace(raceOutput, "--- FAIL: FuzzMember (3.02s)\n", "--- FAIL: FuzzMember (3.02s)\n    --- FAIL: FuzzMember/seed#0 (0.00s)\n", 1), false},
		{"not bare", "--- FAIL: FuzzX (3.0s)\n    member_test.go:12: context deadline exceeded\n", false},
		{"a compile error", "# github.com/idpbench/idpbench/internal/load\ninternal/load/x.go:1:1: syntax error\nFAIL\n", false},
		{"nothing", "", false},
	} {
		whole, bytewise := &raceScan{}, &raceScan{}
		whole.Write([]byte(c.out))
		for i := range len(c.out) {
			bytewise.Write([]byte{c.out[i]})
		}
		if got, gotB := whole.DeadlineRace(), bytewise.DeadlineRace(); got != c.want || gotB != c.want {
			t.Errorf("%s: DeadlineRace = %v (a byte at a time: %v), want %v", c.name, got, gotB, c.want)
		}
	}
}

// fakeGo puts a stand-in go first on PATH: it appends its directory and
// arguments to root/calls, then runs script (sh; $N is its call number).
func fakeGo(t *testing.T, root, script string) {
	bin := t.TempDir()
	write(t, bin, "go", "#!/bin/sh\necho \"$PWD $*\" >>"+filepath.Join(root, "calls")+"\nN=$(wc -l <"+filepath.Join(root, "calls")+")\n"+script)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func calls(t *testing.T, root string) []string {
	b, err := os.ReadFile(filepath.Join(root, "calls"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "|"))
}

func testEnv() (Env, *strings.Builder, *strings.Builder) {
	var out, log strings.Builder
	return Env{Stdout: &out, Stderr: &log, Log: cli.Logger{W: &log, Tag: "t"}}, &out, &log
}

// TestFuzzRun: every target runs, from its module's directory, its output
// streamed; the #75804 race is a warning; the failed one is named at the end.
func TestFuzzRun(t *testing.T) {
	root := repo(t)
	write(t, root, "p/p_test.go", "package p\nfunc FuzzPass(f *testing.F) {}\nfunc FuzzRace(f *testing.F) {}\nfunc FuzzFail(f *testing.F) {}\n")
	write(t, root, "deploy/m/go.mod", "module example.com/m\n")
	write(t, root, "deploy/m/q/q_test.go", "package q\nfunc FuzzMod(f *testing.F) {}\n")
	fakeGo(t, root, `case "$5" in
'^FuzzRace$') printf -- '--- FAIL: FuzzRace (2.01s)\n\tcontext deadline exceeded\nFAIL\n'; exit 1 ;;
'^FuzzFail$') echo '    Failing input written to testdata/fuzz/FuzzFail/1'; exit 1 ;;
*) echo "ok $5" ;;
esac
`)
	e, out, log := testEnv()
	err := Fuzz{Root: root, Time: "2s"}.Run(context.Background(), e)
	if err == nil || err.Error() != "fuzz targets failed: FuzzFail (./p); their inputs are under testdata/fuzz/ of each package" {
		t.Errorf("Run: %v; want FuzzFail named", err)
	}
	want := []string{
		filepath.Join(root, "deploy/m") + "|test|-run|^$|-fuzz|^FuzzMod$|-fuzztime|2s|-parallel|1|./q",
		root + "|test|-run|^$|-fuzz|^FuzzFail$|-fuzztime|2s|-parallel|1|./p",
		root + "|test|-run|^$|-fuzz|^FuzzPass$|-fuzztime|2s|-parallel|1|./p",
		root + "|test|-run|^$|-fuzz|^FuzzRace$|-fuzztime|2s|-parallel|1|./p",
	}
	if got := calls(t, root); !slices.Equal(got, want) {
		t.Errorf("go ran as\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, w := range []string{"[step 1/4] FuzzMod in ./deploy/m/q for 2s", "[step 4/4] FuzzRace in ./p for 2s",
		"warning: FuzzRace: only go's end-of-fuzztime race (golang/go#75804)"} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, log)
		}
	}
	if strings.Contains(log.String(), "warning: FuzzFail") {
		t.Errorf("a written input is warned about as the race:\n%s", log)
	}
	if !strings.Contains(out.String(), "ok ^FuzzPass$\n") || !strings.Contains(out.String(), "Failing input written") {
		t.Errorf("go's output is not streamed to stdout:\n%s", out)
	}

	os.Remove(filepath.Join(root, "calls"))
	e, _, log = testEnv()
	if err := (Fuzz{Root: root, Time: "10x", Names: []string{"FuzzRace", "FuzzPass"}}).Run(context.Background(), e); err != nil {
		t.Errorf("Run(FuzzRace FuzzPass): %v", err)
	}
	if n := len(calls(t, root)); n != 2 || !strings.Contains(log.String(), "all 2 fuzz targets passed (10x each)") {
		t.Errorf("Run(FuzzRace FuzzPass): %d runs, log:\n%s", n, log)
	}
}

// TestFuzzList: --list prints the targets and runs nothing.
func TestFuzzList(t *testing.T) {
	root := repo(t)
	write(t, root, "p/p_test.go", "package p\nfunc FuzzB(f *testing.F) {}\nfunc FuzzA(f *testing.F) {}\n")
	fakeGo(t, root, "exit 1\n")
	e, out, _ := testEnv()
	if err := (Fuzz{Root: root, Time: "3s", List: true}).Run(context.Background(), e); err != nil || out.String() != "./p FuzzA\n./p FuzzB\n" {
		t.Errorf("--list: %v, stdout %q", err, out)
	}
	if c := calls(t, root); len(c) != 0 {
		t.Errorf("--list ran go: %v", c)
	}
	e, _, _ = testEnv()
	if err := (Fuzz{Root: t.TempDir(), Time: "3s", List: true}).Run(context.Background(), e); err == nil || !strings.Contains(err.Error(), "no fuzz targets") {
		t.Errorf("--list of a tree without targets: %v", err)
	}
}

// TestBusyStopsAtFirstFailure: the third run fails, so there is no fourth.
func TestBusyStopsAtFirstFailure(t *testing.T) {
	root := repo(t)
	fakeGo(t, root, `echo "run $N"; [ "$N" -lt 3 ]`+"\n")
	e, out, log := testEnv()
	err := Busy{Root: root, Runs: 5}.Run(context.Background(), e)
	if err == nil || !strings.HasPrefix(err.Error(), "run 3/5: FAIL after ") {
		t.Errorf("Run: %v; want run 3/5 failed", err)
	}
	wantCall := root + "|test|-race|-count=1|-p|1|./..."
	if got := calls(t, root); len(got) != 3 || got[0] != wantCall || got[2] != wantCall {
		t.Errorf("go ran as %v; want 3 times %s", got, wantCall)
	}
	for _, w := range []string{"t: commit ", "; load ", "run 1/5: pass in ", "run 2/5: pass in "} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, log)
		}
	}
	if strings.Contains(log.String(), "run 3/5: pass") || strings.Contains(log.String(), "all ") {
		t.Errorf("log says the failed run passed:\n%s", log)
	}
	if out.String() != "run 1\nrun 2\nrun 3\n" {
		t.Errorf("go test's output on stdout: %q", out)
	}

	os.Remove(filepath.Join(root, "calls"))
	e, _, log = testEnv()
	if err := (Busy{Root: root, Runs: 2}).Run(context.Background(), e); err != nil || !strings.Contains(log.String(), "all 2 runs passed beside a busy loop") {
		t.Errorf("Run(2 passing): %v, log:\n%s", err, log)
	}
}

// TestSpinStops: stop ends the busy loop (a hang here fails by the test's timeout).
func TestSpinStops(t *testing.T) {
	stop := spin()
	stop()
}

func TestExit(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
		line string
	}{
		{nil, 0, ""},
		{context.Canceled, 130, ""},
		{cli.Usagef("unknown flag: --x"), 2, "t: error: unknown flag: --x\nTry 'devtest fuzz --help'.\n"},
		{cli.Usagef("no fuzz target F (see --list)"), 2, "t: error: no fuzz target F (see --list)\nTry 'devtest fuzz --help'.\n"},
		{errors.New("fuzz targets failed: F (./p)"), 1, "t: error: fuzz targets failed: F (./p)\n"},
	} {
		var log strings.Builder
		code := Exit(cli.Logger{W: &log, Tag: "t"}, "devtest fuzz", c.err)
		_, line, _ := strings.Cut(log.String(), " ")
		if code != c.code || line != c.line {
			t.Errorf("Exit(%v) = %d, %q; want %d, %q", c.err, code, log.String(), c.code, c.line)
		}
	}
}
