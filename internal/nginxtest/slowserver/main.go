// Command slowserver is a test target with a fixed service time: every
// request is answered, after sleeping --delay, with a small discovery
// document (loadstep's discovery check passes on it). It listens on a
// loopback address only. The loopback tests run it (internal/nginxtest):
// cmd/loadstep's TestDriverLimited to show that a driver waiting on a slow
// server is not flagged driver-limited, cmd/aggregate's
// TestCompareRealServers as targets of 5 and 10 ms.
//
//	go run ./internal/nginxtest/slowserver --addr 127.0.0.1:8089 --delay 5ms
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const doc = `{"issuer":"http://127.0.0.1/","token_endpoint":"http://127.0.0.1/token"}`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("slowserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address; must be a loopback address")
	delay := fs.Duration("delay", 5*time.Millisecond, "service time of every request")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if host, _, err := net.SplitHostPort(*addr); err != nil || !net.ParseIP(host).IsLoopback() {
		fmt.Fprintf(stderr, "slowserver: --addr %q: want a loopback IP and port\n", *addr)
		return 2
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "slowserver: listening on %s: %v\n", *addr, err)
		return 1
	}
	fmt.Fprintf(stderr, "slowserver: listening on %s, %s per request\n", l.Addr(), *delay)
	srv := &http.Server{Handler: slow(*delay), ReadHeaderTimeout: 5 * time.Second}
	context.AfterFunc(ctx, func() { srv.Close() })
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "slowserver: serving: %v\n", err)
		return 1
	}
	return 0
}

// slow answers every request after sleeping delay: a server whose pace is
// its service time, not its CPU.
func slow(delay time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, doc)
	})
}
