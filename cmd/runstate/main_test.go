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
		{nil, "a subcommand is required: claim, clean, stop, release"},
		{[]string{"claim", state}, "runstate claim: --owner PID is required"},
		{[]string{"claim", "--owner", "1"}, "runstate claim: want one argument, the state directory STATE"},
		{[]string{"clean", state}, "runstate clean: --run-dir DIR is required"},
		{[]string{"stop", state, state}, "runstate stop: want one argument"},
		{[]string{"release", "--force", state}, "unknown flag: --force"},
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
