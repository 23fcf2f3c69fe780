package docstest

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Tool is one of the tools, run in-process by its TestDocs.
type Tool struct {
	Name string // cmd/NAME
	// Hint is the command a usage error points at (cli.Hint): Name, or the
	// script that runs it (run: scripts/run-comparison.sh).
	Hint string
	// Run runs the tool with args and returns its exit code.
	Run func(args []string, stdout, stderr io.Writer) int
}

// Wrappers are the scripts that run a tool, each with the tool and the
// arguments the script puts before the user's; TestWrappers holds each
// script to it. A command line naming the script is checked as one naming
// the tool.
// metavarRe is a metavariable of the docs in a subcommand's place
// ("provision NAME": any product's), not a subcommand.
var metavarRe = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

var Wrappers = map[string][]string{
	"scripts/run-comparison.sh":   {"run"},
	"scripts/ladder.sh":           {"ladder"},
	"scripts/gcjitter.sh":         {"gcjitter"},
	"scripts/bench.sh":            {"bench"},
	"scripts/k8s-step.sh":         {"k8sstep"},
	"scripts/fuzz.sh":             {"devtest", "fuzz"},
	"scripts/test-busy.sh":        {"devtest", "busy"},
	"scripts/false-alarms.sh":     {"experiment", "false-alarms"},
	"scripts/invocation-pilot.sh": {"experiment", "invocations"},
	"scripts/warmup-check.sh":     {"experiment", "warmup-check"},
}

// Check is a tool's TestDocs: the tool behaves as every tool does
// (Behaves), and every command line of the docs that names it, or a script
// that runs it, uses only its subcommands and flags (CheckCommands).
func Check(t *testing.T, tool Tool) {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	docs, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := Tools(root)
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := Scripts(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tools, tool.Name) {
		t.Fatalf("%s is not a tool of the tree (cmd/%s)", tool.Name, tool.Name)
	}
	for _, p := range tool.Behaves() {
		t.Error(p)
	}
	cmds := Commands(docs, tools, scripts)
	n := 0
	for _, c := range cmds {
		if _, ok := tool.argsOf(c); ok {
			n++
		}
	}
	for _, p := range tool.CheckCommands(cmds) {
		t.Error(p)
	}
	t.Logf("%s: %d command lines of the docs checked", tool.Name, n)
}

// run runs the tool and returns its exit code and streams.
func (t Tool) run(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := t.Run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func (t Tool) hint() string {
	if t.Hint != "" {
		return t.Hint
	}
	return t.Name
}

// exitsRe is the statement of a help's exit codes.
var exitsRe = regexp.MustCompile(`(?i)exit (codes|status)`)

// Behaves lists how the tool differs from every tool (docs/tools.md,
// "What every tool shares"): --help on stdout with its exit codes and an
// example, exit 0; --version prints "NAME VERSION", exit 0; a bad flag
// prints nothing on stdout and ends with the hint, exit 2; each subcommand
// the same.
func (t Tool) Behaves() []string {
	var bad []string
	code, stdout, stderr := t.run("--help")
	switch {
	case code != 0 || stderr != "":
		bad = append(bad, fmt.Sprintf("%s --help: exit %d, stderr %q; want its help on stdout, exit 0", t.Name, code, stderr))
	case !exitsRe.MatchString(stdout):
		bad = append(bad, fmt.Sprintf("%s --help does not list its exit codes (\"Exit codes:\" or \"Exit status:\")", t.Name))
	case !strings.Contains(stdout, "Example"):
		bad = append(bad, fmt.Sprintf("%s --help has no example (\"Example:\")", t.Name))
	}
	subs := Subcommands(stdout)
	if code, stdout, stderr := t.run("--version"); code != 0 || stderr != "" || !regexp.MustCompile(`^`+regexp.QuoteMeta(t.Name)+` \S+\n$`).MatchString(stdout) {
		bad = append(bad, fmt.Sprintf("%s --version: exit %d, stdout %q, stderr %q; want \"%s VERSION\", exit 0", t.Name, code, stdout, stderr, t.Name))
	}
	bad = append(bad, t.usage(nil, t.hint())...)
	for _, s := range subs {
		code, stdout, stderr := t.run(s, "--help")
		switch {
		case code != 0 || stderr != "" || stdout == "":
			bad = append(bad, fmt.Sprintf("%s %s --help: exit %d, stderr %q; want its help on stdout, exit 0", t.Name, s, code, stderr))
		case !exitsRe.MatchString(stdout):
			bad = append(bad, fmt.Sprintf("%s %s --help does not list its exit codes (\"Exit codes:\" or \"Exit status:\")", t.Name, s))
		}
		bad = append(bad, t.usage([]string{s}, t.Name+" "+s)...)
	}
	return bad
}

// usage runs the tool with args and a flag no tool has: exit 2, nothing on
// stdout, the hint at hint's --help the last line of stderr.
func (t Tool) usage(args []string, hint string) []string {
	code, stdout, stderr := t.run(append(slices.Clone(args), "--no-such-flag")...)
	want := "Try '" + hint + " --help'.\n"
	if code != 2 || stdout != "" || !strings.HasSuffix(stderr, want) || strings.Count(stderr, "\n") < 2 {
		return []string{fmt.Sprintf("%s --no-such-flag: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout, a line naming the flag and then %q",
			strings.Join(append([]string{t.Name}, args...), " "), code, stdout, stderr, want)}
	}
	return nil
}

// Subcommands are the subcommands a tool's help lists (cli.Tool.Usage:
// the lines under "Subcommands:", up to a blank line).
func Subcommands(help string) []string {
	_, after, ok := strings.Cut(help, "\nSubcommands:\n")
	if !ok {
		return nil
	}
	var out []string
	for _, l := range strings.Split(after, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			break
		}
		out = append(out, f[0])
	}
	return out
}

// flagRe is a flag in a help's flag column.
var flagRe = regexp.MustCompile(`(?:^|[\s,|\[])(--?[A-Za-z0-9][A-Za-z0-9-]*)`)

// Flags are the flags a help lists: on every line that starts with a flag,
// those of its first column (up to two spaces), as pflag's FlagUsages and
// the hand-written helps (run's) lay them out; -h, --help and --version
// always.
func Flags(help string) map[string]bool {
	out := map[string]bool{"-h": true, "--help": true, "--version": true}
	for _, l := range strings.Split(help, "\n") {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "-") {
			continue
		}
		col, _, _ := strings.Cut(t, "  ")
		for _, m := range flagRe.FindAllStringSubmatch(col, -1) {
			out[m[1]] = true
		}
	}
	return out
}

// argsOf is what the tool is given by c: its words after the tool, or
// after the script that runs it with what the script puts before them.
func (t Tool) argsOf(c Cmd) ([]string, bool) {
	if c.Name == t.Name {
		return c.Args, true
	}
	if w, ok := Wrappers[c.Name]; ok && w[0] == t.Name {
		return append(slices.Clone(w[1:]), c.Args...), true
	}
	return nil, false
}

// CheckCommands lists each command of cmds that names the tool (or a
// script that runs it) with a subcommand the tool does not have or a flag
// its (sub)command's --help does not list.
func (t Tool) CheckCommands(cmds []Cmd) []string {
	var bad []string
	_, top, _ := t.run("--help")
	subs := Subcommands(top)
	type help struct {
		code   int
		stdout string
		stderr string
	}
	helps := map[string]help{}
	for _, c := range cmds {
		args, ok := t.argsOf(c)
		if !ok {
			continue
		}
		pos, flags := split(args)
		if len(subs) > 0 && len(pos) > 0 && metavarRe.MatchString(pos[0]) {
			continue // any subcommand: no one's flags to check
		}
		if len(subs) > 0 && len(pos) > 0 && !slices.Contains(subs, pos[0]) && pos[0] != "help" {
			bad = append(bad, fmt.Sprintf("%s: `%s`: %s has no subcommand %q (%s)", c.Where, c.Text, t.Name, pos[0], strings.Join(subs, ", ")))
			continue
		}
		key := strings.Join(pos, "\x00")
		h, ok := helps[key]
		if !ok {
			code, stdout, stderr := t.run(append(slices.Clone(pos), "--help")...)
			h = help{code, stdout, stderr}
			helps[key] = h
		}
		if h.code != 0 {
			bad = append(bad, fmt.Sprintf("%s: `%s`: %s %s --help exits %d: %s", c.Where, c.Text, t.Name, strings.Join(pos, " "), h.code, strings.TrimSpace(h.stderr)))
			continue
		}
		known := Flags(h.stdout)
		for _, f := range flags {
			if !known[f] {
				bad = append(bad, fmt.Sprintf("%s: `%s`: %s has no flag %s", c.Where, c.Text, strings.TrimSpace(t.Name+" "+strings.Join(subOf(pos, subs), " ")), f))
			}
		}
	}
	return bad
}

// subOf is the subcommand of pos, for a tool with subcommands.
func subOf(pos, subs []string) []string {
	if len(subs) == 0 || len(pos) == 0 {
		return nil
	}
	return pos[:1]
}

// split splits a command's arguments into its leading positional words
// (the subcommand and what follows it up to the first flag) and its flags
// (their names, without a value given with =), up to a "--" after which the
// words are another command's. A synopsis's brackets are dropped
// ("[--quick]" is --quick), as are "|" and "...".
func split(args []string) (pos, flags []string) {
	inFlags := false
	for _, a := range args {
		a = strings.Trim(a, "[]")
		switch {
		case a == "--":
			return pos, flags
		case a == "" || a == "|" || a == "..." || a == "…":
		case strings.HasPrefix(a, "-") && a != "-":
			name, _, _ := strings.Cut(a, "=")
			flags = append(flags, name)
			inFlags = true
		case !inFlags:
			pos = append(pos, a)
		}
	}
	return pos, flags
}
