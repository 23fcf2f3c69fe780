package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestToolDispatch(t *testing.T) {
	var got []string
	tool := Tool{
		Name: "t", Synopsis: "SUBCOMMAND", About: "About.\n", Exits: "Exit status: 0 ok.", Examples: []string{"t a -n 1"},
		Subcommands: []Subcommand{
			{Name: "a", Summary: "first", Run: func(_ context.Context, args []string, e Env) error {
				fs := NewFlagSet("a")
				n := fs.IntP("n", "n", 0, "a number")
				if err := (Help{Tool: "t", Head: "Usage: t a\n", Tail: "Example: t a -n 1\n"}).ParseSub(fs, args, e.Stdout); err != nil {
					return err
				}
				got = append(got, "a", strings.Repeat("x", *n))
				return nil
			}},
			{Name: "long-name", Summary: "second", Run: func(context.Context, []string, Env) error { return errors.New("boom") }},
		},
	}
	tests := []struct {
		args     []string
		sub      string
		code     int
		stdout   string // must appear
		stderr   string // must appear
		wantRuns []string
	}{
		{[]string{"a", "-n", "2"}, "a", ExitOK, "", "", []string{"a", "xx"}},
		{[]string{"long-name"}, "long-name", ExitRuntime, "", "t long-name: boom", nil},
		{nil, "", ExitUsage, "", "t: a subcommand is required: a, long-name", nil},
		{[]string{"nosuch"}, "", ExitUsage, "", `unknown subcommand "nosuch" (want a, long-name)`, nil},
		{[]string{"--help"}, "", ExitOK, "  a          first\n  long-name  second\n", "", nil},
		{[]string{"version"}, "", ExitOK, "t ", "", nil},
		{[]string{"a", "--help"}, "a", ExitOK, "Usage: t a\n  -n, --n int", "", nil},
		{[]string{"a", "--version"}, "a", ExitOK, "t ", "", nil},
		{[]string{"a", "--bogus"}, "a", ExitUsage, "", "t a: unknown flag: --bogus", nil},
	}
	for _, tt := range tests {
		got = nil
		var out, errb bytes.Buffer
		sub, err := tool.Dispatch(context.Background(), tt.args, Env{Stdout: &out, Stderr: &errb})
		who := "t"
		if sub != "" {
			who += " " + sub
		}
		code := Done(&errb, who, err)
		if sub != tt.sub || code != tt.code || !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errb.String(), tt.stderr) ||
			strings.Join(got, ",") != strings.Join(tt.wantRuns, ",") {
			t.Errorf("%q: sub %q exit %d runs %q\nstdout %q\nstderr %q\nwant sub %q exit %d runs %q, stdout with %q, stderr with %q",
				tt.args, sub, code, got, out.String(), errb.String(), tt.sub, tt.code, tt.wantRuns, tt.stdout, tt.stderr)
		}
		if errors.Is(err, pflag.ErrHelp) && errb.Len() != 0 {
			t.Errorf("%q: help wrote to stderr: %q", tt.args, errb.String())
		}
	}
}
