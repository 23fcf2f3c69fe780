// Package nginxtest runs the real processes of idpbench's loopback
// integration tests, each on 127.0.0.1 and stopped in t.Cleanup: nginx
// serving a static discovery document with one worker (and, when asked, an
// access log with a line for every request it answered); the server with a
// fixed service time of internal/nginxtest/slowserver; and the tools built
// from this tree, run as the separate processes a user runs. Tests only.
//
// A test that needs a command this machine lacks (nginx, taskset) skips,
// unless IDPBENCH_INTEGRATION=1: then it fails naming the command and the
// Debian package that has it.
package nginxtest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/placement"
)

// Integration reports whether IDPBENCH_INTEGRATION=1: a missing server is
// then a failure, not a skip.
func Integration() bool { return os.Getenv("IDPBENCH_INTEGRATION") == "1" }

// Need returns the path of command, looked up in PATH and then in
// /usr/sbin (where Debian puts nginx, outside a user's PATH). Without it
// the test skips, or fails under IDPBENCH_INTEGRATION=1, naming pkg, the
// Debian package that has it.
func Need(t testing.TB, command, pkg string) string {
	t.Helper()
	if p, err := exec.LookPath(command); err == nil {
		return p
	}
	if p, err := exec.LookPath(filepath.Join("/usr/sbin", command)); err == nil {
		return p
	}
	Missing(t, "%s is not installed (Debian package %s)", command, pkg)
	return ""
}

// Missing skips the test for want of what it needs, or fails it under
// IDPBENCH_INTEGRATION=1.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	what := fmt.Sprintf(format, args...)
	if Integration() {
		t.Fatalf("IDPBENCH_INTEGRATION=1 but %s", what)
		return
	}
	t.Skip(what)
}

// Build builds this module's commands named by their directories
// ("cmd/loadstep", "internal/nginxtest/slowserver") into a temp directory,
// as scripts/lib/common.sh's build_tools does (no race detector: the tests
// measure the tools as a user runs them), and returns each binary's path
// by the directory's base name.
func Build(t testing.TB, dirs ...string) map[string]string {
	t.Helper()
	gobin := Need(t, "go", "golang-go")
	out := t.TempDir()
	args := []string{"build", "-buildvcs=false", "-o", out + "/"}
	bins := map[string]string{}
	for _, d := range dirs {
		args = append(args, "github.com/idpbench/idpbench/"+d)
		bins[filepath.Base(d)] = filepath.Join(out, filepath.Base(d))
	}
	if b, err := exec.Command(gobin, args...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return bins
}

// FreePort returns a loopback TCP port the kernel reports free right now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// SlowServer starts bin (internal/nginxtest/slowserver, from Build), which
// answers every request after sleeping delay, and returns the URL of its
// discovery document once it answers.
func SlowServer(t testing.TB, bin string, delay time.Duration) string {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(FreePort(t))
	p := Start(t, t.TempDir(), "slowserver", bin, "--addr", addr, "--delay", delay.String())
	url := "http://" + addr + "/.well-known/openid-configuration"
	WaitHTTP(t, url, p)
	return url
}

// WaitHTTP waits up to 20 s for url to answer 200, and fails the test
// early, with p's log, when p exits first.
func WaitHTTP(t testing.TB, url string, p *Proc) {
	t.Helper()
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(20 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		resp, err := hc.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		if p.Exited() {
			t.Fatalf("%s exited while waiting for %s: %s", p.Name, url, p.LogText())
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: %s did not answer 200 within 20 s (last: %s); log: %s", p.Name, url, last, p.LogText())
}

// CPUs returns the CPUs this process may use (/proc/self/status
// Cpus_allowed_list, placement.Allowed), in ascending order.
func CPUs(t testing.TB) []int {
	t.Helper()
	s, err := placement.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	return s.CPUs()
}
