package runtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// harness is one test's view of the repository: its scripts, the built
// tools and a scratch directory.
type harness struct {
	t    *testing.T
	root string   // the repository
	work string   // scratch (mode 0711, its real path: PostgreSQL's user reaches into it)
	bin  string   // the built tools (IDPBENCH_BIN)
	env  []string // every script's environment: this process's, IDPBENCH_BIN, IDPBENCH_NO_BUILD=1
}

// newHarness skips unless IDPBENCH_RUNTEST=1, fails naming the first of
// cmds that is missing, builds the tools unless IDPBENCH_NO_BUILD is set (as
// the scripts did) and makes the scratch directory idpbench-NAME.*.
func newHarness(t *testing.T, name string, cmds ...string) *harness {
	t.Helper()
	if os.Getenv("IDPBENCH_RUNTEST") != "1" {
		t.Skip("a real run of the scripts (a minute or more): set IDPBENCH_RUNTEST=1 (scripts/test.sh runs it at its own point)")
	}
	for _, c := range cmds {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("required command not found: %s", c)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, root: root, env: os.Environ()}
	h.work = h.scratch(name)
	h.bin = strings.TrimSpace(h.bash(nil, `if [[ -z "${IDPBENCH_NO_BUILD:-}" ]]; then build_tools; fi; printf '%s\n' "$IDPBENCH_BIN"`))
	h.env = environ(h.env, "IDPBENCH_BIN="+h.bin, "IDPBENCH_NO_BUILD=1")
	return h
}

// scratch makes a directory under IDPBENCH_TMP (default the system's temp
// directory), reachable by PostgreSQL's OS user, removed when the test ends
// unless IDPBENCH_KEEP=1.
func (h *harness) scratch(name string) string {
	parent := os.Getenv("IDPBENCH_TMP")
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "idpbench-"+name+".")
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		if os.Getenv("IDPBENCH_KEEP") == "1" {
			h.t.Logf("kept %s", dir)
			return
		}
		if err := os.RemoveAll(dir); err != nil {
			h.t.Errorf("removing the scratch directory: %v", err)
		}
	})
	if err := os.Chmod(dir, 0o711); err != nil {
		h.t.Fatal(err)
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		h.t.Fatal(err)
	}
	return dir
}

// adapter is the path of product's adapter, products/PRODUCT/adapter.
func (h *harness) adapter(product string) string {
	return filepath.Join(h.root, "products", product, "adapter")
}

// script is the path of scripts/REL.
func (h *harness) script(rel string) string { return filepath.Join(h.root, "scripts", rel) }

// with is the scripts' environment with changes (see environ).
func (h *harness) with(changes ...string) []string { return environ(h.env, changes...) }

// environ returns env with each change applied: "K=V" sets K, a bare "K"
// removes it.
func environ(env []string, changes ...string) []string {
	out := make([]string, 0, len(env)+len(changes))
	drop := map[string]bool{}
	for _, c := range changes {
		k, _, _ := strings.Cut(c, "=")
		drop[k] = true
	}
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	for _, c := range changes {
		if strings.Contains(c, "=") {
			out = append(out, c)
		}
	}
	return out
}

// run runs a command to its end with env (nil: the scripts'), its stdout
// and stderr together written to logPath (a new file in scratch when "")
// and returned with its exit status. A file, not a pipe: a daemon the
// command leaves running must not hold the test.
func (h *harness) run(env []string, logPath, name string, args ...string) (int, string) {
	h.t.Helper()
	if logPath == "" {
		logPath = h.logFile(name)
	}
	f, err := os.Create(logPath)
	if err != nil {
		h.t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = h.orDefault(env), f, f
	err = cmd.Run()
	f.Close()
	return exitCode(h.t, name, err), readFile(h.t, logPath)
}

// logFile is a new file in scratch for a command's output.
func (h *harness) logFile(name string) string {
	f, err := os.CreateTemp(h.work, filepath.Base(name)+".*.log")
	if err != nil {
		h.t.Fatal(err)
	}
	f.Close()
	return f.Name()
}

// runFor runs a command that should end within limit, as run does; one
// still running then is stopped (stop) and reported as exit -1.
func (h *harness) runFor(limit time.Duration, env []string, logPath, name string, args ...string) (int, string) {
	h.t.Helper()
	b := h.start(env, logPath, name, args...)
	select {
	case <-b.done:
		return b.wait(), readFile(h.t, logPath)
	case <-time.After(limit):
		b.stop(time.Minute)
		return -1, fmt.Sprintf("still running after %s, stopped: %s", limit, tail(readFile(h.t, logPath), 10))
	}
}

// mustRun is run that fails the test unless the command exits 0.
func (h *harness) mustRun(env []string, logPath, name string, args ...string) string {
	h.t.Helper()
	code, out := h.run(env, logPath, name, args...)
	if code != 0 {
		h.t.Fatalf("%s %s: exit %d: %s", filepath.Base(name), strings.Join(args, " "), code, tail(out, 20))
	}
	return out
}

// bash runs a snippet of the scripts' own functions after sourcing
// scripts/lib/common.sh, with $1... the args, and returns its stdout; it
// fails the test when the snippet fails.
func (h *harness) bash(env []string, snippet string, args ...string) string {
	h.t.Helper()
	out, err := h.try(env, snippet, args...)
	if err != nil {
		h.t.Fatalf("bash %q: %v", snippet, err)
	}
	return out
}

// try is bash that returns the snippet's failure, with its stderr's tail.
func (h *harness) try(env []string, snippet string, args ...string) (string, error) {
	// $0 is common.sh's path, so the snippet needs no quoting of it.
	cmd := exec.Command("bash", append([]string{"-c",
		`set -o errexit -o nounset -o pipefail; source "$0"; ` + snippet, h.script("lib/common.sh")}, args...)...)
	cmd.Env = h.orDefault(env)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%w: %s", err, tail(stderr.String(), 10))
	}
	return string(out), nil
}

// in is h for a subtest.
func (h *harness) in(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}

func (h *harness) orDefault(env []string) []string {
	if env == nil {
		return h.env
	}
	return env
}

// exitCode is a finished command's exit status; a command that could not
// be started fails the test.
func exitCode(t *testing.T, name string, err error) int {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	t.Fatalf("%s: %v", name, err)
	return -1
}

// bg is a command running in the background.
type bg struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it has ended
	err  error         // Wait's, once done is closed
}

// start starts a command in the background with env, its output to
// logPath, stdin empty, as the leader of a session and process group of
// its own (setsid), so that stopping it reaches everything it started. It
// is stopped when the test ends.
func (h *harness) start(env []string, logPath, name string, args ...string) *bg {
	h.t.Helper()
	logf, err := os.Create(logPath)
	if err != nil {
		h.t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = h.orDefault(env), logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("starting %s: %v", name, err)
	}
	b := &bg{cmd: cmd, done: make(chan struct{})}
	go func() { b.err = cmd.Wait(); close(b.done) }()
	h.t.Cleanup(func() { b.stop(60 * time.Second) })
	return b
}

func (b *bg) pid() int { return b.cmd.Process.Pid }

// running reports whether the command has not ended yet.
func (b *bg) running() bool {
	select {
	case <-b.done:
		return false
	default:
		return true
	}
}

// wait waits for the end and returns the exit status (-1: killed by a signal).
func (b *bg) wait() int {
	<-b.done
	var exit *exec.ExitError
	if errors.As(b.err, &exit) {
		return exit.ExitCode()
	}
	return 0
}

// stop sends TERM to the command's process group and KILL after grace;
// a run-comparison.sh stops the products it started (each in a group of
// its own) on TERM.
func (b *bg) stop(grace time.Duration) {
	if !b.running() {
		return
	}
	_ = syscall.Kill(-b.pid(), syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(grace):
		_ = syscall.Kill(-b.pid(), syscall.SIGKILL)
		<-b.done
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// readFile is a file's content; it fails the test when it cannot be read.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
