// Command standin stands in for a Zitadel release binary in
// internal/e2e's TestE2EZitadelNative: it checks how products/zitadel/adapter
// starts Zitadel in native mode (the subcommand, --config with the
// generated file, the masterkey from the environment and never in argv nor
// in the file, the first instance's admin password and PAT path), writes
// the PAT file as start-from-init does, and answers /debug/ready with 200
// on the configured port, on 127.0.0.1. It implements none of Zitadel's
// APIs. Each start appends its argv to $ZITADEL_STANDIN_LOG. A violated
// check exits 1 with its message on stderr; TERM or INT ends it with 0.
//
//	ZITADEL_BIN=/path/to/standin products/zitadel/adapter up STATE
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	portLine = regexp.MustCompile(`(?m)^Port: (\d+)$`)
	patLine  = regexp.MustCompile(`(?m)^  PatPath: (\S+)$`)
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "--help" || args[0] == "--version") {
		fmt.Fprintln(stdout, "zitadel stand-in (products/zitadel/zitadeltest/standin)")
		return 0
	}
	port, err := start(args, getenv)
	if err == nil {
		err = serve(ctx, port)
	}
	if err != nil {
		fmt.Fprintf(stderr, "stand-in: %v\n", err)
		return 1
	}
	return 0
}

// start checks the command line, the environment and the config file as
// the adapter must give them, writes the PAT on start-from-init, logs the
// start and returns the port to serve.
func start(args []string, getenv func(string) string) (int, error) {
	if len(args) == 0 || (args[0] != "start-from-init" && args[0] != "start") {
		return 0, fmt.Errorf("want start-from-init or start, got %q", args)
	}
	i := slices.Index(args, "--config")
	if !slices.Contains(args, "--masterkeyFromEnv") || i < 0 {
		return 0, errors.New("want --masterkeyFromEnv and --config")
	}
	key := getenv("ZITADEL_MASTERKEY")
	if len(key) != 32 {
		return 0, fmt.Errorf("ZITADEL_MASTERKEY has %d characters, want 32", len(key))
	}
	if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, key) }) {
		return 0, errors.New("the masterkey is in argv")
	}
	if i+1 == len(args) {
		return 0, errors.New("--config without a file")
	}
	b, err := os.ReadFile(args[i+1])
	if err != nil {
		return 0, err
	}
	text := string(b)
	if strings.Contains(text, key) {
		return 0, errors.New("the masterkey is in the config file")
	}
	m := portLine.FindStringSubmatch(text)
	if m == nil {
		return 0, fmt.Errorf("no Port: line in %s", args[i+1])
	}
	port, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, fmt.Errorf("Port: in %s: %w", args[i+1], err)
	}
	if args[0] == "start-from-init" {
		if err := writePAT(text, args[i+1], getenv); err != nil {
			return 0, err
		}
	}
	return port, appendLog(getenv("ZITADEL_STANDIN_LOG"), strings.Join(args, " ")+"\n")
}

// writePAT writes the first instance's PAT where the config's
// FirstInstance.PatPath says, as start-from-init does; the first instance
// needs its admin's password from the environment.
func writePAT(text, config string, getenv func(string) string) error {
	if getenv("ZITADEL_FIRSTINSTANCE_ORG_HUMAN_PASSWORD") == "" {
		return errors.New("no first-instance admin password in the environment")
	}
	m := patLine.FindStringSubmatch(text)
	if m == nil {
		return fmt.Errorf("no PatPath: line in %s", config)
	}
	return os.WriteFile(m[1], []byte("stand-in-pat\n"), 0o666)
}

func appendLog(path, line string) error {
	if path == "" {
		return errors.New("ZITADEL_STANDIN_LOG is not set")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// serve answers 200 on /debug/ready and 404 on any other path at
// 127.0.0.1:port until ctx ends.
func serve(ctx context.Context, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(
		func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/debug/ready" {
				w.WriteHeader(http.StatusNotFound)
			}
		})}
	context.AfterFunc(ctx, func() { srv.Close() })
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
