package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestFail(t *testing.T) {
	tests := []struct {
		err        error
		code       int
		wantStderr string
	}{
		{nil, ExitOK, ""},
		{errors.New("reading pool p: no credentials"), ExitRuntime, "tool: reading pool p: no credentials\n"},
		{Usagef("--duration: must be > 0"), ExitUsage, "tool: --duration: must be > 0\nTry 'tool --help'.\n"},
		{CodeError{Code: ExitUsage, Err: errors.New("--driver-cpus (IDPBENCH_DRIVER_CPUS) \"9\": CPU 9 is not one this process may use (0-1)")},
			ExitUsage, "tool: --driver-cpus (IDPBENCH_DRIVER_CPUS) \"9\": CPU 9 is not one this process may use (0-1)\n"},
		{context.Canceled, ExitInterrupted, "tool: context canceled\n"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		if code := Fail(&stderr, "tool", tt.err); code != tt.code || stderr.String() != tt.wantStderr {
			t.Errorf("Fail(%v) = %d, %q; want %d, %q", tt.err, code, stderr.String(), tt.code, tt.wantStderr)
		}
	}
}

// TestFailHint: a subcommand's usage error points at the subcommand's help.
func TestFailHint(t *testing.T) {
	var stderr bytes.Buffer
	code := FailHint(&stderr, "aggregate", "aggregate compare", Usagef("compare: want two inputs"))
	if want := "aggregate: compare: want two inputs\nTry 'aggregate compare --help'.\n"; code != ExitUsage || stderr.String() != want {
		t.Errorf("FailHint: %d, %q; want 2, %q", code, stderr.String(), want)
	}
}

// TestFailNotesReason: Fail leaves the first failure's first line in the
// file IDPBENCH_REASON_FILE names, and a later failure does not replace it.
func TestFailNotesReason(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reason")
	t.Setenv(ReasonFileEnv, path)
	Fail(io.Discard, "coldstart", errors.New("refop: not ready after 2m0s\nlast log lines: ..."))
	Fail(io.Discard, "readback", errors.New("a later failure"))
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "refop: not ready after 2m0s\n" {
		t.Errorf("reason file: %q, %v; want the first failure's first line", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("reason file mode: %v, %v; want 0600", fi.Mode(), err)
	}
}

func TestIsTerminalFalseForBuffers(t *testing.T) {
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("a bytes.Buffer is not a terminal")
	}
}

func TestHelpParse(t *testing.T) {
	h := Help{Tool: "tool", Head: "Usage: tool [flags]\n", Tail: "Example: tool -n 1\n"}
	parse := func(args ...string) (code int, done bool, n int, stdout, stderr string) {
		var version bool
		fs := pflag.NewFlagSet("tool", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.IntVarP(&n, "count", "n", 7, "how many")
		fs.BoolVar(&version, "version", false, "print the version")
		var out, errOut strings.Builder
		code, done = h.Parse(fs, args, &version, &out, &errOut)
		return code, done, n, out.String(), errOut.String()
	}
	if code, done, _, out, _ := parse("--help"); code != ExitOK || !done ||
		!strings.HasPrefix(out, h.Head) || !strings.Contains(out, "--count") || !strings.HasSuffix(out, h.Tail) {
		t.Errorf("--help: code %d done %v output %q", code, done, out)
	}
	if code, done, _, out, _ := parse("--version"); code != ExitOK || !done || !strings.HasPrefix(out, "tool ") {
		t.Errorf("--version: code %d done %v output %q", code, done, out)
	}
	if code, done, _, _, errOut := parse("--bogus"); code != ExitUsage || !done || !strings.Contains(errOut, "--bogus") {
		t.Errorf("--bogus: code %d done %v stderr %q", code, done, errOut)
	}
	if code, done, n, out, errOut := parse("-n", "3"); code != ExitOK || done || n != 3 || out+errOut != "" {
		t.Errorf("-n 3: code %d done %v n %d output %q %q", code, done, n, out, errOut)
	}
}
