package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// What the phases' tests share: the repository's adapters and the tools
// test.sh built, run as test.sh runs them.

// repoRoot is the repository, two directories above this package's.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// tool is the path of a tool test.sh built into IDPBENCH_BIN.
func tool(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(need(t, "IDPBENCH_BIN")[0], name)
	if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("tool %s is not built (%s): scripts/test.sh builds the tools into IDPBENCH_BIN", name, p)
	}
	return p
}

// needCmd fails the test (skips it without IDPBENCH_INTEGRATION=1) when the
// command is not on PATH.
func needCmd(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if integration() {
			t.Fatalf("IDPBENCH_INTEGRATION=1 but %s is not on PATH", name)
		}
		t.Skipf("%s not on PATH", name)
	}
}

// run runs the command name args in the test's environment plus env and
// returns its stdout; a failure fails the test with its stderr.
func run(ctx context.Context, t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	out, stderr, err := runErr(ctx, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr)
	}
	return out
}

// runErr runs the command name args in the test's environment plus env and
// returns its stdout, its stderr and how it ended.
func runErr(ctx context.Context, env []string, name string, args ...string) (string, string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// adapter runs products/PRODUCT/adapter args, as test.sh would, and
// returns its stdout.
func adapter(ctx context.Context, t *testing.T, env []string, product string, args ...string) string {
	t.Helper()
	return run(ctx, t, env, filepath.Join(repoRoot(t), "products", product, "adapter"), args...)
}

// freePort is a loopback TCP port the kernel reports free right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// pidOf is the pid on the first line of a pidfile.
func pidOf(t *testing.T, pidfile string) int {
	t.Helper()
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("pidfile %s: %v", pidfile, err)
	}
	return pid
}

// procStat is /proc/PID/stat's fields after the command name (which may
// hold spaces and parentheses): [0] is field 3, the state.
func procStat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no ')' after the command name", pid)
	}
	return strings.Fields(string(b[i+1:])), nil
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
