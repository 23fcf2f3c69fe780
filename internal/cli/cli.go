// Package cli holds what every idpbench main shares: exit codes, the
// interrupt protocol, version strings and reading secrets without argv.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
)

// Exit codes of every tool.
const (
	ExitOK          = 0
	ExitRuntime     = 1
	ExitUsage       = 2
	ExitUndecided   = 3 // aggregate compare --fail-on: a change crosses a threshold, too few windows to test it
	ExitTargetLost  = 4 // loadstep: the target stopped accepting connections (the result is written)
	ExitInterrupted = 130
)

// UsageError marks an error caused by bad flags or arguments (exit 2).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError.
func Usagef(format string, a ...any) error {
	return UsageError{fmt.Errorf(format, a...)}
}

// CodeError ends a tool with a given exit code: a verdict rather than a
// failure (aggregate compare's gate exits 1 on a regression, 3 undecided).
type CodeError struct {
	Code int
	Err  error
}

func (e CodeError) Error() string { return e.Err.Error() }
func (e CodeError) Unwrap() error { return e.Err }

// ExitCode maps an error to the tool's exit code.
func ExitCode(err error) int {
	var u UsageError
	var c CodeError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &c):
		return c.Code
	case errors.As(err, &u):
		return ExitUsage
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	default:
		return ExitRuntime
	}
}

// SignalContext returns a context cancelled by the first SIGINT or SIGTERM.
// After that first signal the default behaviour is restored, so a second
// SIGINT kills the process.
func SignalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-ch:
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

// buildVersion is set by scripts/lib/common.sh at link time
// (-X github.com/idpbench/idpbench/internal/cli.buildVersion=...), because
// builds with -buildvcs=false carry no VCS revision.
var buildVersion string

// Version returns the version the binary was built from: the link-time
// version, else the VCS revision, else the module version.
func Version() string {
	if buildVersion != "" {
		return buildVersion
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "-dirty"
		}
		return rev
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return "devel"
}

// ReadSecret returns a secret from a file (flag) or, when no file is given,
// from the environment variable env. Secrets never come from argv. The
// trailing newline of the file is trimmed. It returns "" when neither is set.
func ReadSecret(flagName, file, env string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--%s: %w", flagName, err)
		}
		s := strings.TrimRight(string(b), "\r\n")
		if s == "" {
			return "", fmt.Errorf("--%s: %s is empty", flagName, file)
		}
		return s, nil
	}
	return os.Getenv(env), nil
}

// Fail prints err once as "tool: err" on stderr, adds a pointer to --help for
// usage errors, and returns the exit code for err (ExitOK when err is nil).
// The pointer is for a UsageError only (the tool's own flags or arguments):
// a CodeError exiting 2 is about input its --help does not explain.
func Fail(stderr io.Writer, tool string, err error) int {
	return FailHint(stderr, tool, tool, err)
}

// FailHint is Fail whose pointer names the command whose --help explains
// the usage error, e.g. "aggregate compare" for a tool's subcommand.
func FailHint(stderr io.Writer, tool, help string, err error) int {
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(stderr, "%s: %v\n", tool, err)
	NoteReason(err.Error())
	var u UsageError
	if ExitCode(err) == ExitUsage && errors.As(err, &u) {
		fmt.Fprintln(stderr, Hint(help))
	}
	return ExitCode(err)
}

// Hint is the one line after a usage error, the same in every tool and
// script: "Try 'NAME --help'.", NAME the command whose help explains it.
func Hint(name string) string { return "Try '" + name + " --help'." }

// ReasonFileEnv names the file a failing tool or adapter leaves its reason
// in, for the script that ran it: the first failure's reason, one line.
const ReasonFileEnv = "IDPBENCH_REASON_FILE"

// NoteReason writes the first line of why to the file ReasonFileEnv names,
// unless that variable is unset or the file already exists: the first
// failure is the cause, what fails after it follows from it (a script's
// die writes the same file the same way). It never fails the caller.
func NoteReason(why string) {
	path := os.Getenv(ReasonFileEnv)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return
	}
	line, _, _ := strings.Cut(why, "\n")
	fmt.Fprintln(f, line)
	f.Close()
}

// IsTerminal reports whether w is a character device (a TTY): progress
// lines are written only then.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Help is a tool's --help text: Head, the flag list, Tail.
type Help struct {
	Tool       string // the tool's name, as Fail and --version print it
	Head, Tail string
}

// Parse parses args with fs and answers what every tool's command line
// shares: --help prints the help to stdout, --version (when *version is
// set by it) prints the version, and a flag error is printed by Fail as a
// usage error. When done is true the caller returns code; otherwise the
// flags are parsed and the tool goes on.
func (h Help) Parse(fs *pflag.FlagSet, args []string, version *bool, stdout, stderr io.Writer) (code int, done bool) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprint(stdout, h.Head+fs.FlagUsages()+h.Tail)
		return ExitOK, true
	case err != nil:
		return Fail(stderr, h.Tool, UsageError{Err: err}), true
	case version != nil && *version:
		fmt.Fprintf(stdout, "%s %s\n", h.Tool, Version())
		return ExitOK, true
	}
	return ExitOK, false
}
