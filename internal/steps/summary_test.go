package steps

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

func summarySteps() []File {
	return []File{
		{Path: "r/hydra/discovery-c8.json", Step: &schema.Step{Product: "hydra", Scenario: "discovery", Connections: 8,
			QPS: 12400.25, LatencyMS: schema.Latency{P50: 0.622, P95: 1.1, P99: 1.4}, Status: schema.StatusComplete}},
		{Path: "r/keycloak/introspect-c128.json", Step: &schema.Step{Scenario: "introspect", Connections: 128,
			QPS: 812.5, LatencyMS: schema.Latency{P50: 150.2, P95: 400, P99: 1234.5}, ErrorRate: 0.023, Status: schema.StatusInterrupted}},
	}
}

func TestSummaryText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, SummaryRows(summarySteps()), FormatText); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	want := [][]string{
		{"product", "scenario", "c", "qps", "p50_ms", "p95_ms", "p99_ms", "error_rate", "status", "file"},
		{"hydra", "discovery", "8", "12,400", "0.622", "1.10", "1.40", "0%", "complete", "r/hydra/discovery-c8.json"},
		{"keycloak", "introspect", "128", "812", "150", "400", "1,235", "2.3%", "interrupted", "r/keycloak/introspect-c128.json"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, l := range lines {
		if got := strings.Fields(l); strings.Join(got, " ") != strings.Join(want[i], " ") {
			t.Errorf("line %d: %q, want fields %q", i, l, want[i])
		}
		// Aligned: every column starts where the header's does.
		for _, col := range []string{"status", "file"} {
			if strings.Index(lines[0], col) != strings.Index(l, want[i][indexOf(want[0], col)]) {
				t.Errorf("line %d: column %s not aligned:\n%s\n%s", i, col, lines[0], l)
			}
		}
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func TestSummaryCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, SummaryRows(summarySteps()), FormatCSV); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0][0] != "product" || recs[0][7] != "error_rate" {
		t.Fatalf("records %q", recs)
	}
	tests := []struct {
		row, col int
		want     float64
	}{{1, 3, 12400.25}, {2, 6, 1234.5}, {2, 7, 0.023}, {1, 2, 8}}
	for _, tc := range tests {
		got, err := strconv.ParseFloat(recs[tc.row][tc.col], 64)
		if err != nil || got != tc.want {
			t.Errorf("row %d col %d = %q, want %v", tc.row, tc.col, recs[tc.row][tc.col], tc.want)
		}
	}
	if recs[2][0] != "keycloak" {
		t.Errorf("product from the directory: %q, want keycloak", recs[2][0])
	}
}

func TestSummaryJSONLines(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, SummaryRows(summarySteps()), FormatJSON); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&buf)
	var rows []SummaryRow
	for dec.More() {
		var r SummaryRow
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	want := SummaryRows(summarySteps())
	if len(rows) != 2 || rows[0] != want[0] || rows[1] != want[1] {
		t.Errorf("rows %+v, want %+v", rows, want)
	}
}

// TestSummaryHistogramCount: the JSON lines carry the requests and the
// number of values in the latency histogram, -1 for one that does not
// decode.
func TestSummaryHistogramCount(t *testing.T) {
	h := schema.NewHistogram()
	for v := range int64(37) {
		if err := h.RecordValue(1000 + v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := schema.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	rows := SummaryRows([]File{
		{Path: "a.json", Step: &schema.Step{Requests: 40, Histogram: enc}},
		{Path: "b.json", Step: &schema.Step{Requests: 3, Histogram: "HISTbroken"}},
		{Path: "c.json", Step: &schema.Step{}},
	})
	if got := []int64{rows[0].Requests, rows[0].HistogramCount, rows[1].HistogramCount, rows[2].HistogramCount}; got[0] != 40 || got[1] != 37 || got[2] != -1 || got[3] != 0 {
		t.Errorf("requests, histogram counts %v, want [40 37 -1 0]", got)
	}
}

func TestSummaryUnknownFormat(t *testing.T) {
	if err := WriteSummary(&bytes.Buffer{}, nil, "xml"); err == nil {
		t.Error("format xml accepted")
	}
}
