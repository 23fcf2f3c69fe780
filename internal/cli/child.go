package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Command is exec.CommandContext for a child that follows the interrupt
// protocol (a tool of ours, an adapter): when ctx ends, interrupt tells it
// to stop (nil: ForwardInterrupt) and Wait waits for it however long it
// takes -- it drains and writes its record marked interrupted -- rather
// than killing it.
func Command(ctx context.Context, interrupt func(*os.Process) error, argv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if interrupt == nil {
		interrupt = ForwardInterrupt
	}
	cmd.Cancel = func() error { return interrupt(cmd.Process) }
	return cmd
}

// RunCode runs cmd and returns its exit code (ExitInterrupted when a
// signal ended it); an error only when it could not be run.
func RunCode(cmd *exec.Cmd) (int, error) {
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return ExitOK, nil
	case errors.As(err, &ee) && ee.ExitCode() < 0:
		return ExitInterrupted, nil
	case errors.As(err, &ee):
		return ee.ExitCode(), nil
	}
	return 0, fmt.Errorf("running %s: %w", cmd.Path, err)
}

// ForwardInterrupt sends p SIGINT, unless p is in the foreground process
// group of its terminal: a Ctrl-C there reached p already, and a second
// SIGINT would kill it (SignalContext restores the default after the
// first), so it gets none. A signal sent to this process alone (kill -INT
// PID, a script's trap) reaches p only this way.
func ForwardInterrupt(p *os.Process) error {
	if inForeground(p.Pid) {
		return nil
	}
	return p.Signal(os.Interrupt)
}

// inForeground reports whether process pid is in the foreground process
// group of its controlling terminal (/proc/PID/stat: pgrp == tpgid).
func inForeground(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The fields after the command name's last ')': state ppid pgrp session tty_nr tpgid ...
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 6 {
		return false
	}
	pgrp, err1 := strconv.Atoi(f[2])
	tpgid, err2 := strconv.Atoi(f[5])
	return err1 == nil && err2 == nil && tpgid > 0 && tpgid == pgrp
}

// Interrupt sends p SIGINT: Command's interrupt for a child that no
// terminal signals (the tests').
func Interrupt(p *os.Process) error { return p.Signal(os.Interrupt) }

// Logger writes a tool's log lines as scripts/lib/common.sh's log does:
// "15:04:05 TAG: message" on W (stderr).
type Logger struct {
	W   io.Writer
	Tag string
	Now func() time.Time // nil: time.Now
}

// Printf writes one log line.
func (l Logger) Printf(format string, a ...any) {
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	fmt.Fprintf(l.W, "%s %s: %s\n", now().Format("15:04:05"), l.Tag, fmt.Sprintf(format, a...))
}
