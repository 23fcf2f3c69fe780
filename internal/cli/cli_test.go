package cli

import (
	"bytes"
	"context"
	"errors"
	"testing"
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
		{context.Canceled, ExitInterrupted, "tool: context canceled\n"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		if code := Fail(&stderr, "tool", tt.err); code != tt.code || stderr.String() != tt.wantStderr {
			t.Errorf("Fail(%v) = %d, %q; want %d, %q", tt.err, code, stderr.String(), tt.code, tt.wantStderr)
		}
	}
}

func TestIsTerminalFalseForBuffers(t *testing.T) {
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("a bytes.Buffer is not a terminal")
	}
}
