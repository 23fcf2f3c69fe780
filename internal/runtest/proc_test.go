package runtest

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/sample"
)

// processes is a snapshot of every running process.
type processes struct{ tab *sample.ProcTable }

// scanProcesses reads /proc now.
func scanProcesses(t *testing.T) processes {
	t.Helper()
	tab := sample.NewProcTable("")
	if err := tab.Scan(); err != nil {
		t.Fatal(err)
	}
	return processes{tab}
}

// children are the live processes whose parent is pid.
func (ps processes) children(pid int) []int {
	var out []int
	for _, p := range ps.tab.Procs {
		if p.PPID == pid && p.State != 'Z' {
			out = append(out, p.PID)
		}
	}
	return out
}

// descendants are every live process below pid.
func (ps processes) descendants(pid int) []int {
	var out []int
	for _, c := range ps.children(pid) {
		out = append(out, c)
		out = append(out, ps.descendants(c)...)
	}
	return out
}

// group is the live members of process group pgid.
func (ps processes) group(pgid int) []int {
	var out []int
	for _, p := range ps.tab.Procs {
		if p.PGRP == pgid && p.State != 'Z' {
			out = append(out, p.PID)
		}
	}
	return out
}

// comm is pid's command name, "" when it is gone.
func (ps processes) comm(pid int) string {
	if p := ps.tab.Get(pid); p != nil {
		return p.Comm()
	}
	return ""
}

// cmdline is pid's command line, its arguments joined by spaces.
func cmdline(pid int) string { return sample.NewProcTable("").Cmdline(pid) }

// cpusAllowed is /proc/PID/status's Cpus_allowed_list; false when the
// process is gone.
func cpusAllowed(pid int) (string, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			v = strings.TrimSpace(v)
			return v, v != ""
		}
	}
	return "", false
}

// identity is what a pidfile's second line records of a running process:
// "START BOOT_ID" (as runstate.Identity reads it, on its own here); false
// when pid is not running (a zombie is not).
func identity(pid int) (string, bool) {
	tab := sample.NewProcTable("")
	p, ok := tab.Read(pid)
	if !ok || p.State == 'Z' {
		return "", false
	}
	return fmt.Sprintf("%d %s", p.Start, tab.BootID()), true
}

// running reports whether pid runs (and is not a zombie).
func running(pid int) bool {
	_, ok := identity(pid)
	return ok
}

// pidfilePID is the pid on a pidfile's first line; 0 when the file is
// missing, empty or holds no pid.
func pidfilePID(path string) int {
	pid, err := sample.ReadPidfile(path)
	if err != nil {
		return 0
	}
	return pid
}

// pidfileCurrent reports whether the process a pidfile records runs with
// the recorded identity: it is the process that was started (as
// runstate.PidfileCurrent asks it).
func pidfileCurrent(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 2 || lines[1] == "" {
		return false
	}
	pid, err := strconv.Atoi(lines[0])
	if err != nil {
		return false
	}
	got, ok := identity(pid)
	return ok && got == lines[1]
}

// freePort is a loopback TCP port free right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// portFree reports whether nothing listens on 127.0.0.1:port (nor on the
// wildcard address, which would make binding it fail too).
func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}
