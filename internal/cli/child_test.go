package cli

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestCommandInterrupts: a cancelled context SIGINTs the child and waits for
// it to end on its own (its trap's exit status comes back), never SIGKILLs it.
func TestCommandInterrupts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := Command(ctx, Interrupt, "sh", "-c", `trap 'echo drained; exit 7' INT; echo ready; while :; do sleep 0.05; done`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	if line, _ := r.ReadString('\n'); line != "ready\n" {
		t.Fatalf("the child said %q, want ready", line)
	}
	cancel()
	rest, _ := r.ReadString('\n')
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 || rest != "drained\n" {
		t.Errorf("after the cancel: %v, output %q; want the trap's exit 7 and drained", err, rest)
	}
}

func TestInForegroundFalseForUnknownPid(t *testing.T) {
	if inForeground(-1) {
		t.Error("no process is in the foreground")
	}
}

func TestLogger(t *testing.T) {
	var b strings.Builder
	l := Logger{W: &b, Tag: "ladder", Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	l.Printf("[step %d (of at most %d)] %s", 3, 9, "refop discovery c=8")
	if want := "03:04:05 ladder: [step 3 (of at most 9)] refop discovery c=8\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
