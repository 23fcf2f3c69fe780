package runstate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// sleeper starts `sleep 600` in dir, leading its own process group when
// group is true, and stops it when the test ends.
func sleeper(t *testing.T, dir string, group bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: group}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // reaps it: a stopped sleeper is no zombie
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return cmd
}

// said collects what a function says.
type said []string

func (s *said) say(line string) { *s = append(*s, line) }

func (s said) has(t *testing.T, want string) {
	t.Helper()
	if !slices.ContainsFunc(s, func(l string) bool { return strings.Contains(l, want) }) {
		t.Errorf("said %q; want a line with %q", s, want)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestClaim: a claim makes a 0700 directory with its owner; a second
// claim while the owner lives is refused naming it; a claim after an owner
// that is gone (here: a pid recorded with another start time) says so and
// takes over; a symlink is never a state directory.
func TestClaim(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	var s said
	if err := Claim(dir, os.Getpid(), s.say); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	if !PidfileCurrent(filepath.Join(dir, "owner")) {
		t.Error("the owner file does not record this process")
	}
	err := Claim(dir, os.Getpid(), s.say)
	if want := fmt.Sprintf("is held by a live session (pid %d)", os.Getpid()); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a second claim: %v, want %q", err, want)
	}
	id, _ := Identity(os.Getpid())
	writeFile(t, filepath.Join(dir, "owner"), fmt.Sprintf("%d\n1%s\n", os.Getpid(), id))
	if err := Claim(dir, os.Getpid(), s.say); err != nil {
		t.Fatalf("a claim after a session that is gone: %v", err)
	}
	s.has(t, fmt.Sprintf("an earlier session (pid %d) did not finish", os.Getpid()))

	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	if err := Claim(link, os.Getpid(), s.say); err == nil || !strings.Contains(err.Error(), "not a directory of this user") {
		t.Errorf("a claim of a symlink: %v", err)
	}
	if err := Release(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s after Release: %v", dir, err)
	}
}

// TestStopLeftover: a recorded group leader is stopped with its group, a
// recorded process that leads none alone, and a pid recorded with another
// start time is left running; every pidfile is removed.
func TestStopLeftover(t *testing.T) {
	dir := t.TempDir()
	leader, member, decoy := sleeper(t, dir, true), sleeper(t, dir, false), sleeper(t, dir, true)
	for name, pid := range map[string]int{"leader": leader.Process.Pid, "member": member.Process.Pid} {
		if err := WritePidfile(filepath.Join(dir, name+".pid"), pid); err != nil {
			t.Fatal(err)
		}
	}
	id, _ := Identity(decoy.Process.Pid)
	writeFile(t, filepath.Join(dir, "decoy.pid"), fmt.Sprintf("%d\n1%s\n", decoy.Process.Pid, id))
	var s said
	for _, name := range []string{"leader", "member", "decoy"} {
		if err := StopLeftover(filepath.Join(dir, name+".pid"), s.say); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, name+".pid")); !os.IsNotExist(err) {
			t.Errorf("%s.pid left (%v)", name, err)
		}
	}
	s.has(t, fmt.Sprintf("stopped process group %d, leader (", leader.Process.Pid))
	s.has(t, fmt.Sprintf("stopped pid %d, member (", member.Process.Pid))
	s.has(t, fmt.Sprintf("left pid %d alone: another process than the decoy", decoy.Process.Pid))
	if Running(leader.Process.Pid) || Running(member.Process.Pid) {
		t.Error("a recorded process still runs")
	}
	if !Running(decoy.Process.Pid) {
		t.Error("the decoy was stopped")
	}
}

// TestClean: after a killed session, Clean finds the PostgreSQL it never
// recorded (a process running in a listed directory's data/, named by its
// postmaster.pid) and stops it, removes the listed directories and the
// state's files but owner and lock, and in the run directory the temp
// files of unfinished writes and empty sample files, nothing else.
func TestClean(t *testing.T) {
	state, runDir := t.TempDir(), t.TempDir()
	pg, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(pg, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	server := sleeper(t, data, true)
	writeFile(t, filepath.Join(data, "postmaster.pid"), fmt.Sprintf("%d\n%s\n5432\n", server.Process.Pid, data))
	writeFile(t, filepath.Join(state, "tmpdirs"), pg+"\n")
	for _, f := range []string{"owner", "lock", "phase", "refop/state.env"} {
		writeFile(t, filepath.Join(state, f), "x\n")
	}
	unfinished := []string{"refop/.discovery-c2.json.tmp-123", "COMPARISON.md.tmp", "refop/samples-1.jsonl"}
	kept := []string{"refop/discovery-c2.json", "refop/samples-2.jsonl", "phases.jsonl"}
	for _, f := range unfinished {
		writeFile(t, filepath.Join(runDir, f), "")
	}
	for _, f := range kept {
		writeFile(t, filepath.Join(runDir, f), "{}\n")
	}
	var s said
	if err := Clean(state, runDir, s.say); err != nil {
		t.Fatal(err)
	}
	s.has(t, fmt.Sprintf("found PostgreSQL (pid %d) by its directory %s", server.Process.Pid, pg))
	s.has(t, fmt.Sprintf("stopped process group %d, postgres", server.Process.Pid))
	s.has(t, "removed "+pg+" (")
	s.has(t, "removed the earlier session's files in "+state)
	if Running(server.Process.Pid) {
		t.Error("the unrecorded PostgreSQL still runs")
	}
	left, _ := os.ReadDir(state)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "lock owner" {
		t.Errorf("left in the state directory: %v, want lock and owner", names)
	}
	for _, f := range unfinished {
		s.has(t, "removed the unfinished write "+filepath.Join(runDir, f))
		if _, err := os.Stat(filepath.Join(runDir, f)); !os.IsNotExist(err) {
			t.Errorf("%s left (%v)", f, err)
		}
	}
	for _, f := range kept {
		if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
			t.Errorf("%s removed (%v)", f, err)
		}
	}
	if err := Clean(state, filepath.Join(runDir, "missing"), s.say); err != nil {
		t.Errorf("Clean with no run directory yet: %v", err)
	}
}

func TestHuman(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 43 << 20: "43.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := human(n); got != want {
			t.Errorf("human(%d) = %q, want %q", n, got, want)
		}
	}
}
