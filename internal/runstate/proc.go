package runstate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/idpbench/idpbench/internal/sample"
)

// A pidfile holds the pid on its first line and, on its second, the
// process's identity: "START BOOT_ID", its start time (field 22 of
// /proc/PID/stat) and the boot id (docs/design-reference.md#environment). the run tool
// and coldstart write both lines; a process is stopped only while both match.

// Identity is a running process's "START BOOT_ID"; false when pid does not
// run (a zombie does not).
func Identity(pid int) (string, bool) {
	tab := sample.NewProcTable("")
	p, ok := tab.Read(pid)
	if !ok || p.State == 'Z' {
		return "", false
	}
	return fmt.Sprintf("%d %s", p.Start, tab.BootID()), true
}

// Running reports whether pid runs and is not a zombie (an orphan whose
// parent does not reap it still answers kill -0).
func Running(pid int) bool {
	_, ok := Identity(pid)
	return ok
}

// WritePidfile records pid and its identity in path (an empty second line
// when it has already gone).
func WritePidfile(path string, pid int) error {
	id, _ := Identity(pid)
	return os.WriteFile(path, fmt.Appendf(nil, "%d\n%s\n", pid, id), 0o644)
}

// readPidfile returns the pid and the identity a pidfile records; pid 0
// when its first line is not a pid.
func readPidfile(path string) (pid int, id string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, "", err
	}
	pid, id = parsePidfile(b)
	return pid, id, nil
}

// parsePidfile is readPidfile on a pidfile's bytes.
func parsePidfile(b []byte) (pid int, id string) {
	lines := strings.SplitN(string(b), "\n", 3)
	pid, perr := strconv.Atoi(strings.TrimSpace(lines[0]))
	if perr != nil || pid <= 0 {
		pid = 0
	}
	if len(lines) > 1 {
		id = strings.TrimSpace(lines[1])
	}
	return pid, id
}

// recordedPID is the pid path records, by pid alone (as the adapters'
// pidfiles are read); 0 when path does not exist or is empty, an error
// when its first line is not a pid.
func recordedPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(b) == 0 {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if pid, _ := parsePidfile(b); pid != 0 {
		return pid, nil
	}
	return 0, fmt.Errorf("bad pidfile %s: its first line is not a pid", path)
}

// Alive reports whether the process path records runs (and is not a
// zombie), by pid alone: false without path, or when it is empty or bad.
func Alive(path string) bool {
	pid, err := recordedPID(path)
	return err == nil && pid != 0 && Running(pid)
}

// PidfileCurrent reports whether the process path records runs with the
// recorded identity: it is the process that was started.
func PidfileCurrent(path string) bool {
	pid, want, err := readPidfile(path)
	if err != nil || pid == 0 || want == "" {
		return false
	}
	got, ok := Identity(pid)
	return ok && got == want
}

// groupMembers are the live (non-zombie) processes of process group pgid.
func groupMembers(pgid int) []int {
	tab := sample.NewProcTable("")
	if tab.Scan() != nil {
		return nil
	}
	var pids []int
	for _, p := range tab.Procs {
		if p.PGRP == pgid && p.State != 'Z' {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

// leadsGroup reports whether pid leads its own process group.
func leadsGroup(pid int) bool {
	p, ok := sample.NewProcTable("").Read(pid)
	return ok && p.PGRP == pid
}

// stopGroup sends TERM to process group pgid, KILL after timeout (saying
// so first, when warn is not nil), and fails naming the members that
// survive.
func stopGroup(pgid int, timeout time.Duration, warn func(string)) error {
	if len(groupMembers(pgid)) == 0 {
		return nil
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	if waitFor(timeout, 200*time.Millisecond, func() bool { return len(groupMembers(pgid)) == 0 }) {
		return nil
	}
	if warn != nil {
		warn(fmt.Sprintf("process group %d ignored TERM for %s; sending KILL", pgid, timeout))
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if waitFor(5*time.Second, 100*time.Millisecond, func() bool { return len(groupMembers(pgid)) == 0 }) {
		return nil
	}
	return fmt.Errorf("process group %d survived KILL: %s", pgid, strings.Trim(fmt.Sprint(groupMembers(pgid)), "[]"))
}

// StopGroup stops the process group whose leader path records (an
// adapter's pids/PRODUCT.pid, as coldstart writes it): TERM to the group,
// KILL after timeout with a warning (warn), and removes path once no member
// is left; it fails naming the survivors. Nothing to stop when path does
// not exist or is empty. By the group id alone, as the adapters stop what
// they started: the members outlive a leader that exited.
func StopGroup(path string, timeout time.Duration, warn func(string)) error {
	pgid, err := recordedPID(path)
	if err != nil || pgid == 0 {
		return err
	}
	if err := stopGroup(pgid, timeout, func(s string) { warn(s + " (" + path + ")") }); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.Remove(path)
}

// stopPID sends TERM to pid, KILL after timeout.
func stopPID(pid int, timeout time.Duration) error {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	if waitFor(timeout, 100*time.Millisecond, func() bool { return !Running(pid) }) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if waitFor(5*time.Second, 100*time.Millisecond, func() bool { return !Running(pid) }) {
		return nil
	}
	return fmt.Errorf("pid %d survived KILL", pid)
}

// waitFor polls done every step until it holds (true) or timeout passes.
func waitFor(timeout, step time.Duration, done func() bool) bool {
	for deadline := time.Now().Add(timeout); ; time.Sleep(step) {
		if done() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// StopLeftover stops the process path records, its whole process group
// when it leads one, while its identity matches; a pid that now belongs to
// another process is left alone. It removes path and says what it did.
func StopLeftover(path string, say func(string)) error {
	pid, _, err := readPidfile(path)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%s (%s)", strings.TrimSuffix(filepath.Base(path), ".pid"), path)
	switch {
	case pid == 0 || !Running(pid):
	case !PidfileCurrent(path):
		say(fmt.Sprintf("left pid %d alone: another process than the %s (its start time differs)", pid, what))
	case leadsGroup(pid):
		if err := stopGroup(pid, 20*time.Second, say); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		say(fmt.Sprintf("stopped process group %d, %s", pid, what))
	default:
		if err := stopPID(pid, 20*time.Second); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		say(fmt.Sprintf("stopped pid %d, %s", pid, what))
	}
	return os.Remove(path)
}
