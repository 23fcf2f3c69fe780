package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
)

const toolName = "provision"

// subcommand is one of provision's verbs.
type subcommand struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, e env) error
}

// env is the process's streams, passed instead of touching os.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

func subcommands() []subcommand {
	return []subcommand{
		{"zitadel", "provision Zitadel through its APIs: project, apps, machine users, login client, users", runZitadel},
		{"keycloak", "provision Keycloak through its admin REST API: realm, client with audience mapper, users", runKeycloak},
		{"meta", "write a product's idpbench.meta/v1 record from internal/products and the run's inputs", runMeta},
		{"na", "print why a product cannot run a scenario (its static N/A reason), or nothing", runNA},
		{"oidc", "answer the generic oidc adapter from its configuration file: values, N/A reasons, arguments", runOIDC},
	}
}

func names() string {
	var n []string
	for _, sc := range subcommands() {
		n = append(n, sc.name)
	}
	return strings.Join(n, ", ")
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := env{stdin: stdin, stdout: stdout, stderr: stderr}
	who, err := dispatch(ctx, args, e)
	if errors.Is(err, pflag.ErrHelp) {
		return cli.ExitOK
	}
	return cli.Fail(stderr, who, err)
}

// dispatch runs the subcommand args names; who is the name its errors
// carry ("provision zitadel", or "provision" before one is chosen).
func dispatch(ctx context.Context, args []string, e env) (who string, err error) {
	if len(args) == 0 {
		return toolName, cli.Usagef("a subcommand is required: %s", names())
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, topUsage())
		return toolName, nil
	case "--version", "version":
		fmt.Fprintf(e.stdout, "%s %s\n", toolName, cli.Version())
		return toolName, nil
	}
	for _, sc := range subcommands() {
		if sc.name == args[0] {
			return toolName + " " + sc.name, sc.run(ctx, args[1:], e)
		}
	}
	return toolName, cli.Usagef("unknown subcommand %q (want %s)", args[0], names())
}

func topUsage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s SUBCOMMAND [FLAGS]\n\n", toolName)
	b.WriteString("Prepares a product for idpbench through its own APIs and writes what the\n")
	b.WriteString("benchmark records about it. Secrets come from files or the environment,\n")
	b.WriteString("never from arguments, and are never printed.\n\nSubcommands:\n")
	for _, sc := range subcommands() {
		fmt.Fprintf(&b, "  %-8s %s\n", sc.name, sc.summary)
	}
	b.WriteString("\nFlags:\n  -h, --help     this help; '" + toolName + " SUBCOMMAND --help' explains its flags\n")
	b.WriteString("      --version  print the build's version and exit\n")
	b.WriteString("\nExit status: 0 ok, 1 runtime error, 2 usage error, 130 interrupted.\n\nExample:\n")
	b.WriteString("  provision zitadel --issuer http://localhost:8080 --pat-file state/admin.pat --out-dir state/secrets\n")
	b.WriteString("  provision meta --product refop --product-version v3.52.0 --state state -o state/meta.json\n")
	return b.String()
}

// newFlagSet returns a flag set whose errors come back from parse as usage
// errors.
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
}

// parse parses args; --help prints head, the flags and tail to stdout and
// --version the version, both returning pflag.ErrHelp (exit 0).
func parse(fs *pflag.FlagSet, args []string, head, tail string, e env) error {
	help := fs.BoolP("help", "h", false, "print this help and exit")
	version := fs.Bool("version", false, "print the build's version and exit")
	_ = fs.MarkHidden("help") // listed below, without pflag's [=true|false]
	_ = fs.MarkHidden("version")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp), err == nil && *help:
		fmt.Fprint(e.stdout, head+fs.FlagUsages()+
			"  -h, --help     print this help and exit\n      --version  print the build's version and exit\n"+tail)
		return pflag.ErrHelp
	case err != nil:
		return cli.UsageError{Err: err}
	case *version:
		fmt.Fprintf(e.stdout, "%s %s\n", toolName, cli.Version())
		return pflag.ErrHelp
	}
	return nil
}
