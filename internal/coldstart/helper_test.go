package coldstart

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/sample"
)

// The test binary doubles as the product under test: with
// COLDSTART_HELPER set it runs the helper instead of the tests.
//
//	serve:ADDR     start a child (hang), wait 300 ms, then serve 200 on ADDR/ready
//	exit           print three log lines and exit 3
//	hang           sleep until killed
//	stubborn       ignore SIGTERM and sleep until killed
func TestMain(m *testing.M) {
	if mode := os.Getenv("COLDSTART_HELPER"); mode != "" {
		helper(mode)
		return
	}
	os.Exit(m.Run())
}

func helper(mode string) {
	switch {
	case strings.HasPrefix(mode, "serve:"):
		serve(strings.TrimPrefix(mode, "serve:"))
	case mode == "exit":
		fmt.Fprintln(os.Stderr, "starting\nloading config\nfatal: database unreachable")
		os.Exit(3)
	case mode == "stubborn":
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Hour)
	default:
		time.Sleep(time.Hour)
	}
}

func serve(addr string) {
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), "COLDSTART_HELPER=hang")
	if err := child.Start(); err != nil {
		os.Exit(4)
	}
	ballast := bytes.Repeat([]byte{1}, 16<<20) // visible RSS
	time.Sleep(300 * time.Millisecond)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		os.Exit(5)
	}
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ready" {
			http.NotFound(w, r)
			return
		}
		w.Write(ballast[:2])
	}))
}

// freeAddr returns a loopback address nobody listens on (for now).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// alive reports whether any process of group pgid runs (zombies do not).
func alive(pgid int) bool {
	return groupRunning(sample.NewProcTable(""), pgid) > 0
}

// killGroup ends a group the test left running.
func killGroup(t *testing.T, pgid int) {
	t.Helper()
	syscall.Kill(-pgid, syscall.SIGKILL)
	for i := 0; i < 100 && alive(pgid); i++ {
		time.Sleep(20 * time.Millisecond)
	}
}
