package runstate

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// group starts script under sh as the leader of its own process group,
// returns once it printed its first line (it is set up), and kills the
// group when the test ends.
func group(t *testing.T, script string) *exec.Cmd {
	t.Helper()
	return startGroup(t, exec.Command("sh", "-c", script), fmt.Sprintf("%q", script))
}

// startGroup starts cmd as the leader of its own process group, returns
// once it printed its first line, and kills the group when the test ends;
// what names it in the failure.
func startGroup(t *testing.T, cmd *exec.Cmd, what string) *exec.Cmd {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_, err = bufio.NewReader(out).ReadString('\n')
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // reaps the leader: a stopped one is no zombie
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done })
	if err != nil {
		t.Fatalf("%s never said it was ready: %v", what, err)
	}
	return cmd
}

// TestStopGroup: a group that ends on TERM is stopped, leader and child,
// without a warning, and its pidfile removed; a group that ignores TERM
// is warned about and killed; a missing or empty pidfile is nothing to
// stop; a pidfile without a pid fails naming it.
func TestStopGroup(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		script string
		warned bool
	}{
		"ends on TERM": {"sleep 600 & echo ready; wait", false},
		"ignores TERM": {"trap '' TERM; sleep 600 & echo ready; wait", true},
		// The child says ready once it ignores TERM: a parent that said it
		// at the fork raced the child's trap on a busy machine.
		"child TERMless": {"(trap '' TERM; echo ready; sleep 600) & wait", true},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := group(t, c.script)
			pgid := cmd.Process.Pid
			if n := len(groupMembers(pgid)); n < 2 {
				t.Fatalf("the group has %d members, want the shell and its child", n)
			}
			pidfile := filepath.Join(dir, name+".pid")
			writePid(t, pidfile, pgid)
			var warned said
			if err := StopGroup(pidfile, 300*time.Millisecond, warned.say); err != nil {
				t.Fatal(err)
			}
			if m := groupMembers(pgid); len(m) != 0 {
				t.Errorf("members %v left after StopGroup", m)
			}
			if _, err := os.Stat(pidfile); !os.IsNotExist(err) {
				t.Errorf("pidfile after StopGroup: %v, want it removed", err)
			}
			if c.warned {
				warned.has(t, fmt.Sprintf("process group %d ignored TERM for 300ms; sending KILL (%s)", pgid, pidfile))
			} else if len(warned) > 0 {
				t.Errorf("warned %q about a group that ended on TERM", warned)
			}
		})
	}
	empty := filepath.Join(dir, "empty.pid")
	writeFile(t, empty, "")
	for _, p := range []string{filepath.Join(dir, "none.pid"), empty} {
		if err := StopGroup(p, time.Second, nil); err != nil {
			t.Errorf("StopGroup(%s) = %v, want nothing to stop", p, err)
		}
	}
	bad := filepath.Join(dir, "bad.pid")
	writeFile(t, bad, "refop\n")
	if err := StopGroup(bad, time.Second, nil); err == nil || !strings.Contains(err.Error(), "bad pidfile "+bad) {
		t.Errorf("StopGroup of a pidfile without a pid = %v", err)
	}
}

// TestAlive: a running process's pidfile is alive; a reaped one's, a
// missing, an empty one and one without a pid are not.
func TestAlive(t *testing.T) {
	dir := t.TempDir()
	live, dead, empty, bad := filepath.Join(dir, "live.pid"), filepath.Join(dir, "dead.pid"), filepath.Join(dir, "empty.pid"), filepath.Join(dir, "bad.pid")
	writePid(t, live, sleeper(t, dir, false).Process.Pid)
	writePid(t, dead, deadPID(t))
	writeFile(t, empty, "")
	writeFile(t, bad, "x\n")
	if !Alive(live) {
		t.Errorf("Alive(%s) = false for a running sleep", live)
	}
	for _, p := range []string{dead, empty, bad, filepath.Join(dir, "none.pid")} {
		if Alive(p) {
			t.Errorf("Alive(%s) = true", p)
		}
	}
}

// TestPorts: FreePort's port is free; bound on loopback or on the
// wildcard address, it is not.
func TestPorts(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "0.0.0.0"} {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if !PortFree(port) {
			t.Errorf("FreePort's %d is not free", port)
		}
		l, err := net.Listen("tcp4", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			t.Fatal(err)
		}
		if PortFree(port) {
			t.Errorf("port %d free while listening on %s", port, host)
		}
		l.Close()
	}
}

// TestListening: a listener's port listens; a port that a client
// connection holds as its own (PortFree says taken) does not, and neither
// is left after down.
func TestListening(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	server := l.Addr().(*net.TCPAddr).Port
	client, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: client}}
	c, err := d.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if PortFree(client) {
		t.Fatalf("port %d free while a connection holds it", client)
	}
	for _, tt := range []struct {
		port int
		want bool
	}{{server, true}, {client, false}} {
		got, err := Listening("/proc/self", tt.port)
		if err != nil || got != tt.want {
			t.Errorf("Listening(%d) = %t, %v; want %t", tt.port, got, err, tt.want)
		}
	}
	left, err := leftPorts(map[string]string{"SERVER_PORT": strconv.Itoa(server), "CLIENT_PORT": strconv.Itoa(client)})
	// The listener is this test's own (after the grace): named by its pid.
	want := fmt.Sprintf("port %d (SERVER_PORT), listened on by pid %d (", server, os.Getpid())
	if err != nil || len(left) != 1 || !strings.HasPrefix(left[0], want) {
		t.Errorf("leftPorts = %q, %v; want only the listener's port, %q...", left, err, want)
	}
	if _, err := Listening(t.TempDir(), server); err == nil || !strings.Contains(err.Error(), "reading the listening sockets") {
		t.Errorf("Listening on a directory without net/tcp: %v, want the read's error", err)
	}
}

// statusServer answers 503 to its first n requests, then code.
func statusServer(t *testing.T, n int64, code int) *httptest.Server {
	var seen atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1) <= n {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if code == http.StatusFound {
			http.Redirect(w, r, "/elsewhere", code)
			return
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(s.Close)
	return s
}

// closedURL is a loopback URL that gives no HTTP response: a listener of
// the test's own that closes every connection at once. (A port picked free
// and closed could be taken by another process meanwhile, and answer.)
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return "http://" + l.Addr().String() + "/"
}

// TestWaitHTTP: a server answering 200 after three 503s is waited for; one
// that never does, or nothing listening, times out naming the last
// status; a recorded process that has exited ends the wait at once.
func TestWaitHTTP(t *testing.T) {
	ctx := context.Background()
	s := statusServer(t, 3, http.StatusOK)
	if err := WaitHTTP(ctx, s.URL, 200, time.Minute, ""); err != nil {
		t.Errorf("WaitHTTP of a server that answers 200 on its 4th request: %v", err)
	}
	never := statusServer(t, 1<<40, http.StatusOK)
	for url, last := range map[string]string{never.URL: "503", closedURL(t): "000"} {
		err := WaitHTTP(ctx, url, 200, 300*time.Millisecond, "")
		if want := fmt.Sprintf("timeout after 300ms waiting for %s to answer 200 (last: %s)", url, last); err == nil || err.Error() != want {
			t.Errorf("WaitHTTP(%s) = %v, want %q", url, err, want)
		}
	}
	dead := filepath.Join(t.TempDir(), "dead.pid")
	writePid(t, dead, deadPID(t))
	err := WaitHTTP(ctx, never.URL, 200, time.Hour, dead)
	if want := "process of " + dead + " exited while waiting for " + never.URL; err == nil || err.Error() != want {
		t.Errorf("WaitHTTP with a dead pidfile = %v, want %q", err, want)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := WaitHTTP(cancelled, never.URL, 200, time.Hour, ""); err != context.Canceled {
		t.Errorf("WaitHTTP interrupted = %v, want context.Canceled", err)
	}
}

// TestHealth: a live group and a discovery answering 200 is healthy, and
// so is a discovery answering 200 without a pidfile; a group without a live
// member, a discovery answering 502 or a redirect, or nothing listening,
// each says why in the adapter's words.
func TestHealth(t *testing.T) {
	ok, bad, moved := statusServer(t, 0, 200), statusServer(t, 0, 502), statusServer(t, 0, http.StatusFound)
	live, gone, closed := group(t, "sleep 600 & echo ready; wait").Process.Pid, deadPID(t), closedURL(t)
	for _, c := range []struct {
		name, url string
		pgid      int // 0: no pidfile
		want      string
	}{
		{"healthy", ok.URL, live, ""},
		{"no pidfile", ok.URL, 0, ""},
		{"group exited", ok.URL, gone, fmt.Sprintf("its process group %d has exited (logs: STATE/logs)", gone)},
		{"502", bad.URL, live, "its discovery endpoint " + bad.URL + " answers 502"},
		{"redirect", moved.URL, live, "its discovery endpoint " + moved.URL + " answers 302"},
		{"nothing listens", closed, 0, "its discovery endpoint " + closed + " answers no HTTP response"},
	} {
		t.Run(c.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			if c.pgid != 0 {
				writeFile(t, filepath.Join(state, "pids", "refop.pid"), fmt.Sprintf("%d\n", c.pgid))
			}
			why := Health(context.Background(), Prober{Timeout: 5 * time.Second}, state, "refop", c.url)
			if want := strings.ReplaceAll(c.want, "STATE", state); why != want {
				t.Errorf("Health = %q, want %q", why, want)
			}
		})
	}
}

// TestLeftPortsGrace: a listener that closes within the grace after the
// down is not left (an exiting process closing its sockets); one that stays
// is, after the grace.
func TestLeftPortsGrace(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	closed := make(chan struct{})
	go func() { time.Sleep(300 * time.Millisecond); l.Close(); close(closed) }()
	start := time.Now()
	left, err := leftPorts(map[string]string{"P_PORT": strconv.Itoa(port)})
	<-closed
	if err != nil || len(left) != 0 {
		t.Errorf("leftPorts of a listener closed within the grace = %q, %v; want none", left, err)
	}
	if took := time.Since(start); took >= listenGrace {
		t.Errorf("leftPorts waited %v for a listener that closed after 300 ms; want it to return once the port is free", took)
	}
}
