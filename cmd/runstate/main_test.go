package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func runArgs(args ...string) (int, string, string) {
	var out, errb strings.Builder
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestUsage: a bad command line exits 2 naming what is wrong.
func TestUsage(t *testing.T) {
	state := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{nil, "a subcommand is required: claim, clean, stop, release, left, stop-group, alive, free-port, port-free, wait-http, health"},
		{[]string{"claim", state}, "runstate claim: --owner PID is required"},
		{[]string{"claim", "--owner", "1"}, "runstate claim: want one argument, the state directory STATE"},
		{[]string{"clean"}, "runstate clean: want one argument, the state directory STATE"},
		{[]string{"stop", state, state}, "runstate stop: want one argument"},
		{[]string{"release", "--force", state}, "unknown flag: --force"},
		{[]string{"stop-group", "--timeout", "0s", "x.pid"}, "runstate stop-group: --timeout must be positive"},
		{[]string{"stop-group"}, "runstate stop-group: want one argument, the pidfile PIDFILE"},
		{[]string{"alive", "--pid", "1", "x.pid"}, "runstate alive: want one of a pidfile PIDFILE and --pid PID"},
		{[]string{"alive"}, "runstate alive: want one of a pidfile PIDFILE and --pid PID"},
		{[]string{"free-port", "8080"}, "runstate free-port: want no argument"},
		{[]string{"port-free", "http"}, `runstate port-free: "http" is not a port`},
		{[]string{"port-free", "70000"}, `runstate port-free: "70000" is not a port`},
		{[]string{"wait-http", "--timeout", "1s"}, "runstate wait-http: --url URL is required"},
		{[]string{"wait-http", "--url", "http://127.0.0.1:1/"}, "runstate wait-http: --timeout D is required"},
		{[]string{"health", "--url", "http://127.0.0.1:1/", state}, "runstate health: --product PRODUCT is required"},
		{[]string{"health", "--product", "refop", state}, "runstate health: --url URL is required"},
	}
	for _, tt := range tests {
		if code, _, stderr := runArgs(tt.args...); code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("runstate %q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestClaimTwice: the second claim of a state a live process holds exits 1
// naming it; after a release the state is gone.
func TestClaimTwice(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	pid := strconv.Itoa(os.Getpid())
	if code, _, stderr := runArgs("claim", "--owner", pid, state); code != 0 {
		t.Fatalf("claim: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runArgs("claim", "--owner", pid, state); code != 1 || !strings.Contains(stderr, "held by a live session (pid "+pid+")") {
		t.Errorf("second claim: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runArgs("release", state); code != 0 {
		t.Fatalf("release: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("%s after release: %v", state, err)
	}
}

// TestLeft: something left is one stdout line each, exit 1 and the
// "left after down: ..." line naming it all; nothing left is exit 0 and no
// output; a missing state directory or --product is an error.
func TestLeft(t *testing.T) {
	state := t.TempDir()
	left := filepath.Join(state, "data")
	if err := os.Mkdir(left, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "dirs"), []byte(left+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runArgs("left", "--product", "refop", state)
	if code != 1 || stdout != "directory "+left+"\n" || !strings.Contains(stderr, "runstate left: left after down: directory "+left) {
		t.Errorf("left: exit %d, stdout %q, stderr %q; want 1, the directory, left after down", code, stdout, stderr)
	}
	if err := os.Remove(left); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runArgs("left", "--product", "refop", state); code != 0 || stdout != "" || stderr != "" {
		t.Errorf("nothing left: exit %d, stdout %q, stderr %q; want 0 and nothing", code, stdout, stderr)
	}
	if code, _, stderr := runArgs("left", "--product", "refop", filepath.Join(state, "none")); code != 1 || !strings.Contains(stderr, "no state directory") {
		t.Errorf("no state directory: exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := runArgs("left", state); code != 2 {
		t.Errorf("no --product: exit %d, want 2", code)
	}
}
