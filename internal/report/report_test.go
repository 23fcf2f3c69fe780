package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	registry "github.com/idpbench/idpbench/products"
)

var update = flag.Bool("update", false, "rewrite testdata/COMPARISON.golden.md")

const golden = "testdata/COMPARISON.golden.md"

func TestGoldenComparison(t *testing.T) {
	in, _ := loadRun1(t)
	var buf bytes.Buffer
	r := model.Build(in, model.Options{ToolVersion: "test", ServerMetrics: registry.ServerMetrics}) // as aggregate renders it
	if err := WriteMarkdown(&buf, r, MarkdownOptions{LinkBase: fixtures, ChartsDir: fixtures + "/charts"}); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("COMPARISON.md differs from %s (rerun with -update after checking):\n%s", golden, firstDiff(got, string(want)))
	}
}

// firstDiff shows the first differing line.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		gl, wl := lineAt(g, i), lineAt(w, i)
		if gl != wl {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, gl, wl)
		}
	}
	return ""
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<EOF>"
}

func TestMarkdownEscapesCells(t *testing.T) {
	in := &model.Inputs{Metas: []model.MetaFile{{Path: "x/meta.json", Meta: &schema.Meta{Schema: schema.MetaV1, Product: "x",
		Status: schema.MetaNA, NAReason: "a | b\nc"}}}}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, model.Build(in, model.Options{}), MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `N/A: a \| b c |`) {
		t.Errorf("reason not escaped:\n%s", buf.String())
	}
}

// TestIterationsUnsentHop: a hop sent only when the server asks for it (a
// form login's consent), never in the window, is a row of dashes, not of
// zero milliseconds.
func TestIterationsUnsentHop(t *testing.T) {
	in, _ := loadRun1(t)
	n := 0
	for i := range in.Steps {
		s := in.Steps[i].Step
		if s.Scenario != schema.ScenarioAuthCode || len(s.RequestOrder) == 0 {
			continue
		}
		s.RequestOrder = append(s.RequestOrder, "login_consent")
		s.RequestsByName["login_consent"] = schema.NamedRequests{StatusCodes: map[string]int64{}}
		n++
	}
	if n == 0 {
		t.Fatal("run1 has no auth_code step")
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, model.Build(in, model.Options{}), MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), " | login_consent | 0 | - | - | - |\n") {
		t.Errorf("no row of dashes for the unsent hop:\n%s", buf.String())
	}
}
