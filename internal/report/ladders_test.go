package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
)

// writeKnees writes knee records into a temp dir: hydra's discovery ladder
// stopped after c=8 and repeated three levels; keycloak's userinfo was
// measured in full; hydra's userinfo ran to its end without a knee.
func writeKnees(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	recs := map[string]string{
		"hydra/discovery.knee.json": `{"schema":"idpbench.knee/v1","product":"hydra","scenario":"discovery",
			"ladder":[2,4,8,16,32],"measured":[2,4,8],"skipped":[16,32],"stopped_after":8,
			"reason":"c=4 and c=8 added < 5% to c=2's 12,400 qps while P99 rose 1.00 -> 2.00 ms","noise_pct":5,
			"full_ladder":false,"candidates":[2,4,8],"candidates_reason":"c=8 has round 1's best qps"}`,
		"keycloak/userinfo.knee.json": `{"schema":"idpbench.knee/v1","product":"keycloak","scenario":"userinfo",
			"ladder":[2,4,8,16],"measured":[2,4,8,16],"skipped":[16],"stopped_after":8,"reason":"flat","noise_pct":5,
			"full_ladder":true}`,
		"hydra/userinfo.knee.json": `{"schema":"idpbench.knee/v1","product":"hydra","scenario":"userinfo",
			"ladder":[2,4,8],"measured":[2,4,8],"skipped":[],"stopped_after":0,"reason":"no knee before the end of the ladder: c=8 added 50%",
			"noise_pct":5,"full_ladder":false,"candidates_reason":"no level of round 1 is a steady state: later rounds repeat nothing"}`,
	}
	for name, body := range recs {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestKneeAppendix(t *testing.T) {
	dir := writeKnees(t)
	in, err := model.Load(context.Background(), []string{run1, dir}, nil, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Knees) != 3 {
		t.Fatalf("loaded %d knee records, want 3", len(in.Knees))
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, model.Build(in, model.Options{}), MarkdownOptions{LinkBase: dir, ChartsDir: dir}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"## Ladders: where each stopped\n",
		"| hydra | S1 discovery | c=2, 4, 8 | after c=8 (c=4 and c=8 added < 5% to c=2's 12,400 qps while P99 rose 1.00 -> 2.00 ms); skipped c=16, 32 | c=2, 4, 8 | [discovery.knee.json](hydra/discovery.knee.json) |\n",
		"| hydra | S6 userinfo | c=2, 4, 8 | at the end of the ladder (no knee before the end of the ladder: c=8 added 50%) | none: no level of round 1 is a steady state: later rounds repeat nothing |",
		"| keycloak | S6 userinfo | c=2, 4, 8, 16 | full ladder (the rule would have stopped after c=8, skipping c=16: flat) | none (no later round) |",
		"Not measured, so not drawn: the levels above a ladder's knee (\"Ladders: where each stopped\"): S1 discovery hydra: c=16, 32.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Report order: S1 before S6, then by product.
	out = out[strings.Index(out, "## Ladders: where each stopped"):]
	if i, j := strings.Index(out, "| hydra | S1"), strings.Index(out, "| hydra | S6"); i < 0 || j < i || strings.Index(out, "| keycloak | S6") < j {
		t.Errorf("rows out of order")
	}
}

func TestKneeAppendixAbsentWithoutRecords(t *testing.T) {
	in, _ := loadRun1(t)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, model.Build(in, model.Options{}), MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "where each stopped") {
		t.Error("a run without knee records has a knee appendix")
	}
}
