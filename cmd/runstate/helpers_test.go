package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// reasonFile points IDPBENCH_REASON_FILE at a fresh path for the test.
func reasonFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "reason")
	t.Setenv("IDPBENCH_REASON_FILE", p)
	return p
}

func noReason(t *testing.T, path, after string) {
	t.Helper()
	if b, err := os.ReadFile(path); err == nil {
		t.Errorf("%s noted a reason: %q; a question's no is not one", after, b)
	}
}

// TestQuestions: alive, port-free and health answer by their exit status,
// 0 or 1, with nothing on stderr and no reason noted; health prints why on
// stdout.
func TestQuestions(t *testing.T) {
	reason := reasonFile(t)
	dir := t.TempDir()
	sleep := exec.Command("sleep", "600")
	sleep.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleep.Process.Kill(); _ = sleep.Wait() })
	pid := strconv.Itoa(sleep.Process.Pid)
	live := filepath.Join(dir, "pids", "refop.pid")
	if err := os.MkdirAll(filepath.Dir(live), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(live, []byte(pid+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	bound := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	ok := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(502) }))
	defer bad.Close()

	for _, c := range []struct {
		args   []string
		code   int
		stdout string
	}{
		{[]string{"alive", live}, 0, ""},
		{[]string{"alive", "--pid", pid}, 0, ""},
		{[]string{"alive", filepath.Join(dir, "none.pid")}, 1, ""},
		{[]string{"port-free", bound}, 1, ""},
		{[]string{"health", "--product", "refop", "--url", ok.URL, dir}, 0, ""},
		{[]string{"health", "--product", "refop", "--url", bad.URL, dir}, 1, "its discovery endpoint " + bad.URL + " answers 502\n"},
	} {
		code, stdout, stderr := runArgs(c.args...)
		if code != c.code || stdout != c.stdout || stderr != "" {
			t.Errorf("runstate %q: exit %d, stdout %q, stderr %q; want %d, %q and nothing", c.args, code, stdout, stderr, c.code, c.stdout)
		}
	}
	noReason(t, reason, "a no")

	code, stdout, _ := runArgs("free-port")
	port, err := strconv.Atoi(strings.TrimSpace(stdout))
	if code != 0 || err != nil {
		t.Fatalf("free-port: exit %d, stdout %q", code, stdout)
	}
	if code, _, _ := runArgs("port-free", strconv.Itoa(port)); code != 0 {
		t.Errorf("port-free of free-port's %d: exit %d, want 0", port, code)
	}
}

// TestWaitHTTPFails: a wait that times out says so on stderr, exits 1 and
// notes no reason (the script that waited says what it means).
func TestWaitHTTPFails(t *testing.T) {
	reason := reasonFile(t)
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	defer bad.Close()
	code, _, stderr := runArgs("wait-http", "--url", bad.URL, "--timeout", "300ms")
	if want := fmt.Sprintf("runstate wait-http: timeout after 300ms waiting for %s to answer 200 (last: 503)\n", bad.URL); code != 1 || stderr != want {
		t.Errorf("wait-http: exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
	noReason(t, reason, "wait-http")
	good := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer good.Close()
	if code, _, stderr := runArgs("wait-http", "--url", good.URL, "--timeout", "1m"); code != 0 {
		t.Errorf("wait-http of a server answering 200: exit %d: %s", code, stderr)
	}
}

// TestStopGroupFails: a pidfile without a pid is an error (exit 1), said
// once and noted as the reason, as bash's die did.
func TestStopGroupFails(t *testing.T) {
	reason := reasonFile(t)
	bad := filepath.Join(t.TempDir(), "bad.pid")
	if err := os.WriteFile(bad, []byte("refop\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runArgs("stop-group", bad)
	want := "runstate stop-group: bad pidfile " + bad + ": its first line is not a pid"
	if code != 1 || strings.TrimSpace(stderr) != want {
		t.Errorf("stop-group: exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
	if b, err := os.ReadFile(reason); err != nil || strings.TrimSpace(string(b)) != strings.TrimPrefix(want, "runstate stop-group: ") {
		t.Errorf("reason %q (%v), want the error", b, err)
	}
}
