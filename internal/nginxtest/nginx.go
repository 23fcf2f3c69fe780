package nginxtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/nginxconf"
)

// Options shape the nginx of StartNginx.
type Options struct {
	// AccessLog: log every request answered, a line each, in Nginx.AccessLog.
	AccessLog bool
}

// Nginx is nginx serving a static discovery document on 127.0.0.1 with
// one worker, everything (config, document, access log) in a temp
// directory; its error log is its Proc's log.
type Nginx struct {
	URL       string // the discovery document's URL
	AccessLog string // every request answered, a line each; "" without Options.AccessLog
	argv      []string
	dir       string
	proc      *Proc
}

// StartNginx writes nginx's config into a temp directory, starts nginx on
// a free loopback port and waits until it answers. It skips the test when
// nginx is missing, unless IDPBENCH_INTEGRATION=1.
func StartNginx(t testing.TB, o Options) *Nginx {
	t.Helper()
	bin := Need(t, "nginx", "nginx-light")
	dir := t.TempDir()
	n := &Nginx{dir: dir}
	port := FreePort(t)
	n.URL = fmt.Sprintf("http://127.0.0.1:%d/.well-known/openid-configuration", port)
	access := "off"
	if o.AccessLog {
		n.AccessLog = filepath.Join(dir, "access.log")
		access = n.AccessLog
	}
	writeConfig(t, dir, port, access)
	n.argv = []string{bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", "stderr"}
	n.Start(t)
	return n
}

// writeConfig writes DIR/nginx.conf and the discovery document it serves
// on 127.0.0.1:port (nginxconf).
func writeConfig(t testing.TB, dir string, port int, access string) {
	t.Helper()
	if access == "off" {
		access = ""
	}
	err := nginxconf.Write(dir, nginxconf.Config{Port: port, AccessLog: access,
		Discovery: `{"issuer":"http://127.0.0.1/","token_endpoint":"http://127.0.0.1/oauth2/token"}` + "\n"})
	if err != nil {
		t.Fatal(err)
	}
}

// Start starts nginx (again, after Kill) and waits until it answers.
func (n *Nginx) Start(t testing.TB) {
	t.Helper()
	if n.proc != nil && !n.proc.Exited() {
		t.Fatal("nginx: started while it runs")
	}
	n.proc = Start(t, n.dir, "nginx", n.argv...)
	WaitHTTP(t, n.URL, n.proc)
}

// Kill ends nginx at once, master and worker (SIGKILL): a target that
// dies in the middle of a step. It waits until the master is gone.
func (n *Nginx) Kill(t testing.TB) {
	t.Helper()
	n.proc.Kill(t, syscall.SIGKILL)
	n.proc.Wait(t, 5*time.Second)
}

// Requests is the number of requests nginx logged in AccessLog, once the
// log has stopped growing. nginx writes a request's line after it sent the
// response, so a client that has its answer can be ahead of the log (a
// read just after the readiness check once missed that check's line, and
// the count came out one high later). It reads until two reads 50 ms apart
// agree, for at most 5 s.
func (n *Nginx) Requests(t testing.TB) int64 {
	t.Helper()
	last, deadline := int64(-1), time.Now().Add(5*time.Second)
	for {
		b, err := os.ReadFile(n.AccessLog)
		if err != nil {
			t.Fatalf("nginx's access log: %v", err)
		}
		c := int64(bytes.Count(b, []byte("\n")))
		if c == last || time.Now().After(deadline) {
			return c
		}
		last = c
		time.Sleep(50 * time.Millisecond)
	}
}

// ClearLog empties AccessLog once the lines of the requests answered so far
// are in it (Requests): nginx appends, so from now on it holds the requests
// answered after this call.
func (n *Nginx) ClearLog(t testing.TB) {
	t.Helper()
	n.Requests(t)
	if err := os.Truncate(n.AccessLog, 0); err != nil {
		t.Fatalf("emptying nginx's access log: %v", err)
	}
}
