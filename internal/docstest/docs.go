// Package docstest holds the docs to the code. Every command line in
// README.md, docs/, examples/*/README.md, deploy/*/README.md and
// results/README.md (the index of the committed runs) that names
// one of the tools (cmd/NAME) or a script (scripts/NAME.sh) is checked
// against the real flags and subcommands of that tool (its --help, run
// in-process), every backquoted package.Name and file path the docs name
// must exist, every relative link must lead somewhere, and every tool
// answers --help, --version and a bad flag alike. Each tool's TestDocs
// (cmd/NAME/docs_test.go) runs Check on itself; this package's tests check
// the scripts, the identifiers and links, and that a drift fails. The
// READMEs of committed runs (results/*/README.md) record what ran then and
// are not read.
package docstest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Doc is one Markdown file of the docs.
type Doc struct {
	Path string // from the repository's root
	Text string
}

// Paths are the docs held to the code, from the repository's root.
func Paths(root string) ([]string, error) {
	var out []string
	for _, pattern := range []string{"README.md", "docs/*.md", "docs/*/*.md", "examples/*/README.md", "deploy/*/README.md", "results/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return nil, err
		}
		for _, p := range m {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	slices.Sort(out)
	return out, nil
}

// Load reads the docs (Paths) under root.
func Load(root string) ([]Doc, error) {
	paths, err := Paths(root)
	if err != nil {
		return nil, err
	}
	var docs []Doc
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return nil, err
		}
		docs = append(docs, Doc{Path: p, Text: string(b)})
	}
	return docs, nil
}

// Block is a stretch of a doc: shell code (a fenced block of sh, bash,
// console or no language, or an indented block) or a paragraph of prose.
type Block struct {
	Line int // its first line, 1-based
	Code bool
	Text string
}

// Blocks splits a doc into its code blocks and its paragraphs of prose (a
// table row is a paragraph of its own). Fenced blocks of other languages
// (yaml, json, go) are neither.
func Blocks(text string) []Block {
	var out []Block
	var cur *Block
	flush := func() {
		if cur != nil && strings.TrimSpace(cur.Text) != "" {
			out = append(out, *cur)
		}
		cur = nil
	}
	add := func(line int, code bool, s string) {
		if cur == nil || cur.Code != code {
			flush()
			cur = &Block{Line: line, Code: code}
		}
		cur.Text += s + "\n"
	}
	lines := strings.Split(text, "\n")
	fence, shell := "", false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case fence != "" && strings.HasPrefix(t, fence):
			flush()
			fence = ""
		case fence != "":
			if shell {
				add(i+1, true, l)
			}
		case strings.HasPrefix(t, "```"):
			flush()
			fence = "```"
			lang := strings.TrimPrefix(t, "```")
			shell = lang == "" || lang == "sh" || lang == "bash" || lang == "console" || lang == "shell"
		case t == "":
			if cur != nil && cur.Code {
				cur.Text += "\n"
				continue
			}
			flush()
		case strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t"):
			if cur == nil || cur.Code || prevBlank(lines, i) {
				add(i+1, true, strings.TrimPrefix(strings.TrimPrefix(l, "    "), "\t"))
				continue
			}
			add(i+1, false, l)
		case strings.HasPrefix(t, "|"):
			flush()
			add(i+1, false, l)
			flush()
		default:
			add(i+1, false, l)
		}
	}
	flush()
	return out
}

// prevBlank reports whether the line before i is blank (an indented block
// starts after one; an indented line inside a paragraph or list item does
// not start one).
func prevBlank(lines []string, i int) bool {
	return i == 0 || strings.TrimSpace(lines[i-1]) == ""
}

// spanRe is an inline code span.
var spanRe = regexp.MustCompile("`([^`]+)`")

// Spans are the inline code spans of a paragraph, with their line.
func Spans(b Block) []Span {
	var out []Span
	for _, m := range spanRe.FindAllStringSubmatchIndex(b.Text, -1) {
		out = append(out, Span{Line: b.Line + strings.Count(b.Text[:m[0]], "\n"), Text: strings.Join(strings.Fields(b.Text[m[2]:m[3]]), " ")})
	}
	return out
}

// Span is an inline code span of a doc.
type Span struct {
	Line int
	Text string
}

// Cmd is a command line of a doc that names one of ours.
type Cmd struct {
	Where string   // DOC:LINE
	Text  string   // the words, as the doc gives them
	Name  string   // the tool (cmd/NAME) or the script (scripts/NAME.sh)
	Args  []string // the words after it
}

// Commands are the command lines of the docs that name a tool of tools or
// a script of scripts (paths from the root): every simple command of a
// code block, and every inline code span that is one.
func Commands(docs []Doc, tools, scripts []string) []Cmd {
	var out []Cmd
	for _, d := range docs {
		for _, b := range Blocks(d.Text) {
			if b.Code {
				out = append(out, codeCommands(d.Path, b, tools, scripts)...)
				continue
			}
			for _, s := range Spans(b) {
				for _, words := range Simple(s.Text) {
					if c, ok := named(Command(words), tools, scripts); ok {
						c.Where, c.Text = fmt.Sprintf("%s:%d", d.Path, s.Line), s.Text
						out = append(out, c)
					}
				}
			}
		}
	}
	return out
}

// codeCommands are the commands of a code block that name one of ours,
// each with the line it starts on.
func codeCommands(path string, b Block, tools, scripts []string) []Cmd {
	var out []Cmd
	lines := strings.Split(b.Text, "\n")
	for i := 0; i < len(lines); i++ {
		// A logical line: the lines a trailing backslash joins.
		start, text := i, lines[i]
		for strings.HasSuffix(strings.TrimRight(lines[i], " "), "\\") && i+1 < len(lines) {
			i++
			text += "\n" + lines[i]
		}
		for _, words := range Simple(text) {
			if c, ok := named(Command(words), tools, scripts); ok {
				c.Where, c.Text = fmt.Sprintf("%s:%d", path, b.Line+start), strings.Join(strings.Fields(text), " ")
				out = append(out, c)
			}
		}
	}
	return out
}

// named tells whether words run one of ours: a tool by its name or a path
// ending in it (bin/aggregate), "go run ./cmd/NAME", or a script by its
// path (scripts/NAME.sh, ./scripts/NAME.sh).
func named(words []string, tools, scripts []string) (Cmd, bool) {
	if len(words) == 0 {
		return Cmd{}, false
	}
	w := words[0]
	if w == "go" && len(words) > 2 && words[1] == "run" && strings.HasPrefix(words[2], "./cmd/") {
		name := strings.TrimPrefix(words[2], "./cmd/")
		return Cmd{Name: name, Args: words[3:]}, slices.Contains(tools, name)
	}
	if i := strings.Index(w, "scripts/"); i >= 0 && strings.HasSuffix(w, ".sh") {
		name := w[i:]
		return Cmd{Name: name, Args: words[1:]}, slices.Contains(scripts, name)
	}
	base := w[strings.LastIndex(w, "/")+1:]
	return Cmd{Name: base, Args: words[1:]}, slices.Contains(tools, base)
}

// Tools are the tools of the tree at root: cmd/NAME.
func Tools(root string) ([]string, error) {
	return dirNames(filepath.Join(root, "cmd"))
}

// Scripts are the scripts a user runs: scripts/NAME.sh.
func Scripts(root string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(root, "scripts", "*.sh"))
	var out []string
	for _, p := range m {
		out = append(out, "scripts/"+filepath.Base(p))
	}
	return out, err
}

func dirNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, err
}

// Root is the repository's root, from the working directory up (the
// directory holding go.mod of this module).
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/idpbench/idpbench\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of github.com/idpbench/idpbench above the working directory")
		}
		dir = parent
	}
}
