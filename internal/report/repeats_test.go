package report

import (
	"bytes"
	"os"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
)

const repeatsGolden = "testdata/REPEATS.golden.md"

func TestRepeatsGolden(t *testing.T) {
	r := model.Build(repeatInputs(t), model.Options{ToolVersion: "test"})
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, r, MarkdownOptions{LinkBase: "testdata"}); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(repeatsGolden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(repeatsGolden)
	if err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("COMPARISON.md differs from %s (rerun with -update after checking):\n%s", repeatsGolden, firstDiff(got, string(want)))
	}
}
