package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// Env is a process's streams, passed to a subcommand instead of os.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Subcommand is one verb of a tool made of verbs (aggregate, provision).
type Subcommand struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, args []string, e Env) error
}

// Tool is a tool made of subcommands: its name, the verbs, and the parts of
// its top-level --help around the generated list of subcommands.
type Tool struct {
	Name        string
	Synopsis    string // after "Usage: NAME ", e.g. "SUBCOMMAND [FLAGS]"
	About       string // a paragraph or two, ending in a newline
	Exits       string // the exit statuses
	Examples    []string
	Subcommands []Subcommand
}

// names lists the subcommands, comma separated.
func (t Tool) names() string {
	n := make([]string, len(t.Subcommands))
	for i, sc := range t.Subcommands {
		n[i] = sc.Name
	}
	return strings.Join(n, ", ")
}

// Dispatch runs the subcommand args[0] names with the rest of args. It
// answers --help/help and --version/version itself, and returns the name
// of the subcommand it ran ("" when none was chosen) with its error; a
// subcommand's --help ends in pflag.ErrHelp, which the caller treats as
// success.
func (t Tool) Dispatch(ctx context.Context, args []string, e Env) (sub string, err error) {
	if len(args) == 0 {
		return "", Usagef("a subcommand is required: %s", t.names())
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(e.Stdout, t.Usage())
		return "", nil
	case "--version", "version":
		fmt.Fprintf(e.Stdout, "%s %s\n", t.Name, Version())
		return "", nil
	}
	for _, sc := range t.Subcommands {
		if sc.Name == args[0] {
			return sc.Name, sc.Run(ctx, args[1:], e)
		}
	}
	return "", Usagef("unknown subcommand %q (want %s)", args[0], t.names())
}

// Usage is the top-level --help.
func (t Tool) Usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s %s\n\n%s\nSubcommands:\n", t.Name, t.Synopsis, t.About)
	width := 0
	for _, sc := range t.Subcommands {
		width = max(width, len(sc.Name))
	}
	for _, sc := range t.Subcommands {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, sc.Name, sc.Summary)
	}
	b.WriteString("\nFlags:\n  -h, --help     this help; '" + t.Name + " SUBCOMMAND --help' explains its flags\n")
	b.WriteString("      --version  print the build's version and exit\n")
	fmt.Fprintf(&b, "\n%s\n\nExamples:\n", t.Exits)
	for _, ex := range t.Examples {
		b.WriteString("  " + ex + "\n")
	}
	return b.String()
}

// NewFlagSet returns a subcommand's flag set: errors come back from
// ParseSub, nothing is printed by pflag itself.
func NewFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
}

// ParseSub parses a subcommand's args with fs, adding -h/--help and
// --version. --help prints Head, the flags and Tail to stdout, --version
// the version; both return pflag.ErrHelp (exit 0). A flag error comes back
// as a UsageError.
func (h Help) ParseSub(fs *pflag.FlagSet, args []string, stdout io.Writer) error {
	help := fs.BoolP("help", "h", false, "print this help and exit")
	version := fs.Bool("version", false, "print the build's version and exit")
	_ = fs.MarkHidden("help") // listed below, without pflag's [=true|false]
	_ = fs.MarkHidden("version")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp), err == nil && *help:
		fmt.Fprint(stdout, h.Head+fs.FlagUsages()+
			"  -h, --help     print this help and exit\n      --version  print the build's version and exit\n"+h.Tail)
		return pflag.ErrHelp
	case err != nil:
		return UsageError{Err: err}
	case *version:
		fmt.Fprintf(stdout, "%s %s\n", h.Tool, Version())
		return pflag.ErrHelp
	}
	return nil
}

// Done maps what a subcommand returned to the tool's exit code, printing
// the error once as "who: err" (see Fail); a --help is success.
func Done(stderr io.Writer, who string, err error) int {
	if errors.Is(err, pflag.ErrHelp) {
		return ExitOK
	}
	return Fail(stderr, who, err)
}
