package docstest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Decls are the top-level names of every Go package of the tree, by
// package name (several directories may share one: all are searched):
// functions, types, variables, constants, and methods as Type.Method.
type Decls map[string]map[string]bool

// ReadDecls parses every non-test Go file under root (testdata and
// modules of their own left out) for its package's top-level names.
func ReadDecls(root string) (Decls, error) {
	d := Decls{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if path != root && (e.Name() == "testdata" || strings.HasPrefix(e.Name(), ".") || fileExists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := d[f.Name.Name]
		if names == nil {
			names = map[string]bool{}
			d[f.Name.Name] = names
		}
		for _, decl := range f.Decls {
			declNames(decl, names)
		}
		return nil
	})
	return d, err
}

// declNames adds the names decl declares.
func declNames(decl ast.Decl, names map[string]bool) {
	switch x := decl.(type) {
	case *ast.FuncDecl:
		if x.Recv == nil || len(x.Recv.List) == 0 {
			names[x.Name.Name] = true
			return
		}
		names[recvType(x.Recv.List[0].Type)+"."+x.Name.Name] = true
	case *ast.GenDecl:
		for _, s := range x.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names[s.Name.Name] = true
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names[n.Name] = true
				}
			}
		}
	}
}

// recvType is a method's receiver type name (T of T, *T, T[X]).
func recvType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvType(x.X)
	case *ast.IndexExpr:
		return recvType(x.X)
	case *ast.IndexListExpr:
		return recvType(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}

// identRe is a backquoted package.Name (package.Type.Member, a call's
// parentheses allowed).
var identRe = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Za-z][A-Za-z0-9_]*))?(?:\(\))?$`)

// CheckIdents lists every backquoted package.Name of the docs whose
// package is one of the tree's and does not declare it (of
// package.Type.Member, the type is checked).
func CheckIdents(docs []Doc, d Decls) []string {
	var bad []string
	for _, doc := range docs {
		for _, s := range allSpans(doc) {
			m := identRe.FindStringSubmatch(s.Text)
			if m == nil || d[m[1]] == nil || m[1] == "main" {
				continue
			}
			if !d[m[1]][m[2]] {
				bad = append(bad, fmt.Sprintf("%s:%d: `%s`: package %s declares no %s", doc.Path, s.Line, s.Text, m[1], m[2]))
			}
		}
	}
	return bad
}

// allSpans are the inline code spans of a doc's prose.
func allSpans(doc Doc) []Span {
	var out []Span
	for _, b := range Blocks(doc.Text) {
		if !b.Code {
			out = append(out, Spans(b)...)
		}
	}
	return out
}

// placeholderRe is a path that stands for paths: <run>, NAME, *, $VAR,
// {x}, ..., an upper-case word as a segment.
var placeholderRe = regexp.MustCompile(`[<>*$\{\}…]|\.\.\.|(^|/)[A-Z][A-Z0-9_-]*[A-Z0-9](/|$)|(^|/)(NAME|FILE|PRODUCT|SCENARIO|ID|DIR|OUT|STATE|TOOL|SIDE|KIND|RUN)\.`)

// OutputRuns are the run ids the docs' commands write (results/quick,
// results/latest, ...): their paths are a user's outputs, not the tree's.
var OutputRuns = []string{"quick", "latest", "mine", "base", "pr", "k8s", "test", "hk", "full-YYYYMMDD"}

// CheckPaths lists every backquoted file path of the docs that is not in
// the tree (from the root, or from the doc's directory), and every
// relative link that leads nowhere or to a heading its target lacks.
func CheckPaths(root string, docs []Doc) []string {
	var bad []string
	top := map[string]bool{}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		top[e.Name()] = true
	}
	for _, doc := range docs {
		for _, s := range allSpans(doc) {
			p := pathOf(s.Text)
			if p == "" || !top[strings.Split(p, "/")[0]] || placeholderRe.MatchString(p) || output(p) {
				continue
			}
			if !fileExists(filepath.Join(root, p)) && !fileExists(filepath.Join(root, filepath.Dir(doc.Path), p)) {
				bad = append(bad, fmt.Sprintf("%s:%d: `%s`: no such file or directory in the tree", doc.Path, s.Line, s.Text))
			}
		}
		bad = append(bad, checkLinks(root, doc)...)
	}
	return bad
}

// pathOf is the path a span names, "" when it is no path: one word with a
// slash or a file name's dot, its anchor, line (":12") and trailing
// punctuation dropped.
func pathOf(span string) string {
	if strings.ContainsAny(span, " \t") || !strings.ContainsAny(span, "/.") || strings.Contains(span, "://") {
		return ""
	}
	p, _, _ := strings.Cut(span, "#")
	if i := strings.LastIndex(p, ":"); i > 0 {
		p = p[:i]
	}
	return strings.TrimRight(strings.TrimPrefix(p, "./"), "/.,;")
}

// output reports whether p is a path a documented command writes
// (results/quick/COMPARISON.md) rather than one of the tree's.
func output(p string) bool {
	seg := strings.Split(p, "/")
	return len(seg) > 1 && seg[0] == "results" && slices.Contains(OutputRuns, seg[1])
}

// linkRe is a Markdown link's target.
var linkRe = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// checkLinks lists the relative links of doc that lead nowhere, and those
// to a Markdown heading (FILE.md#anchor, #anchor) the file does not have.
func checkLinks(root string, doc Doc) []string {
	var bad []string
	for i, l := range strings.Split(doc.Text, "\n") {
		for _, m := range linkRe.FindAllStringSubmatch(l, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := filepath.Join(root, filepath.Dir(doc.Path), file)
			if file == "" {
				path = filepath.Join(root, doc.Path)
			}
			if !fileExists(path) {
				bad = append(bad, fmt.Sprintf("%s:%d: link %s: no such file or directory", doc.Path, i+1, target))
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !slices.Contains(anchors(path), anchor) {
				bad = append(bad, fmt.Sprintf("%s:%d: link %s: no heading #%s in %s", doc.Path, i+1, target, anchor, file))
			}
		}
	}
	return bad
}

// anchors are the anchors GitHub gives the headings of a Markdown file:
// lower case, punctuation but hyphens and underscores dropped, spaces as
// hyphens, a repeated one numbered.
func anchors(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]int{}
	fence := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var a strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				a.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				a.WriteRune(r)
			}
		}
		s := a.String()
		if n := seen[s]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", s, n))
		} else {
			out = append(out, s)
		}
		seen[s]++
	}
	return out
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
