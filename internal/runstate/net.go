package runstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/httpprobe"
	"github.com/idpbench/idpbench/internal/sample"
)

// FreePort is a loopback TCP port the kernel reports free right now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// PortFree reports whether 127.0.0.1:port can be bound (with SO_REUSEADDR,
// as Go's listeners set it: a socket in TIME_WAIT does not hold the port, a
// listener on the wildcard address does).
func PortFree(port int) bool {
	l, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// Listening reports whether a socket in state LISTEN holds TCP port port
// on any address, IPv4 or IPv6, of the proc filesystem proc's network
// namespace ("/proc/self" for this process's). A port that PortFree finds
// taken can be held by a connection instead: another process's outgoing
// connection may take a stopped server's port as its own ephemeral port,
// and keeps it in TIME_WAIT for a minute after it closes.
func Listening(proc string, port int) (bool, error) {
	inodes, err := listeners(proc, port)
	return len(inodes) > 0, err
}

// listeners are the inodes of the sockets in state LISTEN on TCP port
// port, IPv4 and IPv6, of proc's network namespace.
func listeners(proc string, port int) ([]uint64, error) {
	var inodes []uint64
	for _, f := range []string{"tcp", "tcp6"} {
		name := filepath.Join(proc, "net", f)
		b, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) && f == "tcp6" {
			continue // a kernel without IPv6
		}
		if err != nil {
			return nil, fmt.Errorf("reading the listening sockets: %w", err)
		}
		socks, err := sample.ParseNetTCP(bytes.NewReader(b), name)
		if err != nil {
			return nil, err
		}
		for _, s := range socks {
			if s.Listen && int(s.Addr.Port()) == port {
				inodes = append(inodes, s.Inode)
			}
		}
	}
	return inodes, nil
}

// holders names the processes of the proc filesystem root procRoot
// ("/proc") that hold one of the socket inodes: "pid N (comm)", sorted by
// pid; none when no process's descriptors show them (another user's, or
// gone).
func holders(procRoot string, inodes []uint64) []string {
	want := map[string]bool{}
	for _, n := range inodes {
		want["socket:["+strconv.FormatUint(n, 10)+"]"] = true
	}
	pids, _ := filepath.Glob(filepath.Join(procRoot, "[0-9]*"))
	var out []string
	for _, dir := range pids {
		fds, _ := filepath.Glob(filepath.Join(dir, "fd", "*"))
		for _, fd := range fds {
			if link, err := os.Readlink(fd); err == nil && want[link] {
				comm, _ := os.ReadFile(filepath.Join(dir, "comm"))
				out = append(out, fmt.Sprintf("pid %s (%s)", filepath.Base(dir), strings.TrimSpace(string(comm))))
				break
			}
		}
	}
	return out
}

// Prober asks a URL for its HTTP status, as curl -o /dev/null -w
// '%{http_code}' does (internal/httpprobe: one GET on a new connection,
// redirects not followed, no proxy), within Timeout; 0 when no HTTP
// response came.
type Prober struct {
	Client  *http.Client // nil: httpprobe.Client()
	Timeout time.Duration
}

// Status is url's status code, 0 when it did not answer.
func (p Prober) Status(ctx context.Context, url string) int {
	code, err := httpprobe.Status(ctx, p.Client, url, p.Timeout)
	if err != nil {
		return 0
	}
	return code
}

// WaitHTTP polls url every 200 ms (each ask at most 2 s) until it answers
// want, for at most timeout; it fails early when pidfile (when not "")
// records a process that no longer runs.
func WaitHTTP(ctx context.Context, url string, want int, timeout time.Duration, pidfile string) error {
	p := Prober{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	for {
		got := p.Status(ctx, url)
		switch {
		case got == want:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case pidfile != "" && !Alive(pidfile):
			return fmt.Errorf("process of %s exited while waiting for %s", pidfile, url)
		case time.Now().After(deadline):
			return fmt.Errorf("timeout after %s waiting for %s to answer %d (last: %03d)", timeout, url, want, got)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Health checks a product an adapter started (its health entry point,
// scripts/lib/adapter.sh): the process group dir/pids/PRODUCT.pid records,
// when there is one, has a live member, and its discovery endpoint url
// answers 200 within 10 s (p's Timeout when not 0). When not, why says so in
// the words the ladder's lost file and the run's log keep:
//
//	its process group N has exited (logs: DIR/logs)
//	its discovery endpoint URL answers CODE
//	its discovery endpoint URL answers no HTTP response
func Health(ctx context.Context, p Prober, dir, product, url string) (why string) {
	pidfile := filepath.Join(dir, "pids", product+".pid")
	if b, err := os.ReadFile(pidfile); err == nil && len(b) > 0 {
		if pgid, _ := parsePidfile(b); pgid == 0 || len(groupMembers(pgid)) == 0 {
			first, _, _ := strings.Cut(string(b), "\n")
			return fmt.Sprintf("its process group %s has exited (logs: %s)", first, filepath.Join(dir, "logs"))
		}
	}
	if p.Timeout == 0 {
		p.Timeout = 10 * time.Second
	}
	switch code := p.Status(ctx, url); code {
	case http.StatusOK:
		return ""
	case 0:
		return fmt.Sprintf("its discovery endpoint %s answers no HTTP response", url)
	default:
		return fmt.Sprintf("its discovery endpoint %s answers %d", url, code)
	}
}
