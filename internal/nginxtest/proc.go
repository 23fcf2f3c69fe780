package nginxtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Proc is a process a test started, leading its own process group (a
// server's workers are in it too), its output appended to Log. t.Cleanup
// stops the group when its leader still runs: TERM, then KILL after 5 s.
type Proc struct {
	Name string
	Log  string
	cmd  *exec.Cmd
	done chan struct{} // closed once the leader has exited and been reaped
}

// Start starts argv with its output in DIR/NAME.log.
func Start(t testing.TB, dir, name string, argv ...string) *Proc {
	t.Helper()
	p := &Proc{Name: name, Log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	f, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	defer f.Close() // the child has its own copy
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		p.cmd.Wait() // the exit status is read from ProcessState
		close(p.done)
	}()
	t.Cleanup(func() { p.Stop(t) })
	return p
}

// Pid is the process's id (and its group's).
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to timeout for the process to exit and returns its exit
// status (-1 when a signal ended it); the test fails at the timeout.
func (p *Proc) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("%s still runs after %s; log: %s", p.Name, timeout, p.LogText())
		return 0
	}
}

// Kill sends sig to the process's group while its leader runs: to a
// server's master and its workers alike.
func (p *Proc) Kill(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if p.Exited() {
		t.Fatalf("signalling %s: it has exited already; log: %s", p.Name, p.LogText())
	}
	if err := syscall.Kill(-p.Pid(), sig); err != nil {
		t.Fatalf("signalling %s (process group %d): %v", p.Name, p.Pid(), err)
	}
}

// Stop ends the process group if its leader still runs: TERM, then KILL
// after 5 s. Only a running leader's group is signalled, so that a group
// id the kernel has handed on is never touched.
func (p *Proc) Stop(t testing.TB) {
	t.Helper()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if p.Exited() {
			return
		}
		syscall.Kill(-p.Pid(), sig) // ESRCH: it has just exited
		select {
		case <-p.done:
			return
		case <-time.After(5 * time.Second):
		}
	}
	t.Errorf("%s (pid %d) survived KILL", p.Name, p.Pid())
}

// LogText is the process's output so far, its last 2,000 bytes.
func (p *Proc) LogText() string {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return err.Error()
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}

// LastLine is the last line of the process's output.
func (p *Proc) LastLine() string {
	text := p.LogText()
	return text[strings.LastIndexByte(text, '\n')+1:]
}
