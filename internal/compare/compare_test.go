package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// win is one measured window of a discovery-like step.
func win(product, scenario string, c int, qps, p50, p99 float64, k int) steps.File {
	start := t0.Add(time.Duration(k) * 10 * time.Second)
	n := int64(qps * 3)
	s := &schema.Step{
		Schema: schema.StepV1, Product: product, ProductVersion: "v1", Scenario: scenario, Connections: c,
		Check: schema.ScenarioCheck(scenario), Status: schema.StatusComplete, DurationS: 3,
		Start: start, End: start.Add(3 * time.Second), Requests: n, OK: n, QPS: qps,
		LatencyModel: schema.ModelClosedLoop, LatencyMS: schema.Latency{P50: p50, P99: p99},
		Labels: map[string]string{"phase": "ladder"},
	}
	return steps.File{Path: product + "/" + scenario + ".json", Step: s}
}

// windows returns n windows around qps (±spread%, alternating), latency
// inversely proportional.
func windows(product, scenario string, c int, qps, spread float64, n, k0 int) []steps.File {
	var out []steps.File
	for i := range n {
		f := 1 + spread/100*float64(i%3-1)
		q := qps * f * (1 + 0.001*float64(i))
		out = append(out, win(product, scenario, c, q, 1000*float64(c)/q, 3000*float64(c)/q, k0+i))
	}
	return out
}

func side(name string, steps ...[]steps.File) Side {
	in := &model.Inputs{}
	for _, s := range steps {
		in.Steps = append(in.Steps, s...)
	}
	return Side{Name: name, Inputs: in}
}

func only(t *testing.T, rows []Row) Row {
	t.Helper()
	if len(rows) != 1 {
		t.Fatalf("got %d rows, want 1: %+v", len(rows), rows)
	}
	return rows[0]
}

func TestSameWindowsNoChange(t *testing.T) {
	w := windows("hydra", "discovery", 8, 1000, 2, 5, 0)
	row := only(t, Compare(side("a", w), side("b", w), Options{}))
	if row.Status != StatusCompared {
		t.Fatalf("status %s (%s)", row.Status, row.Reason)
	}
	for name, d := range map[string]Delta{"qps": row.QPS, "p50": row.P50, "p99": row.P99} {
		if !d.Testable || d.Significant || d.Pct != 0 {
			t.Errorf("%s: %+v, want testable, not significant, 0%%", name, d)
		}
	}
}

func TestSlowerIsSignificantWithTheRightSign(t *testing.T) {
	old := windows("hydra", "discovery", 8, 1000, 2, 5, 0)
	new := windows("hydra", "discovery", 8, 700, 2, 5, 10)
	row := only(t, Compare(side("a", old), side("b", new), Options{}))
	if !row.QPS.Significant || row.QPS.Pct > -25 || row.QPS.Pct < -35 {
		t.Errorf("qps %+v: want significant, about -30%%", row.QPS)
	}
	if !row.P50.Significant || row.P50.Pct < 35 || !row.P99.Significant || row.P99.Pct < 35 {
		t.Errorf("p50 %+v p99 %+v: want significant, about +43%%", row.P50, row.P99)
	}
	if row.QPS.P > 0.05 {
		t.Errorf("p = %g", row.QPS.P)
	}
}

func TestOverlappingWindowsAreNoise(t *testing.T) {
	// The same spread, medians 1% apart: the windows interleave.
	old := windows("hydra", "discovery", 8, 1000, 5, 6, 0)
	new := windows("hydra", "discovery", 8, 1010, 5, 6, 10)
	row := only(t, Compare(side("a", old), side("b", new), Options{}))
	if row.QPS.Significant || !row.QPS.Testable {
		t.Errorf("qps %+v: want testable and not significant", row.QPS)
	}
}

func TestTooFewWindowsAreNotTested(t *testing.T) {
	old := windows("hydra", "discovery", 8, 1000, 0, 3, 0)
	new := windows("hydra", "discovery", 8, 500, 0, 3, 10)
	row := only(t, Compare(side("a", old), side("b", new), Options{}))
	if row.QPS.Testable || row.QPS.Significant {
		t.Errorf("3+3 windows: %+v, want untestable (min p 0.1 > 0.05)", row.QPS)
	}
	g, err := ParseGate("qps<-5%")
	if err != nil {
		t.Fatal(err)
	}
	v := g.Check([]Row{row})
	if len(v.Failed) != 0 || len(v.Undecided) != 1 {
		t.Errorf("verdict %+v: want one undecided", v)
	}
	// A looser alpha makes 3+3 testable (min p 0.1).
	row = only(t, Compare(side("a", old), side("b", new), Options{Alpha: 0.1}))
	if !row.QPS.Testable || !row.QPS.Significant {
		t.Errorf("alpha 0.1, 3+3 apart: %+v, want significant", row.QPS)
	}
}

func TestMinP(t *testing.T) {
	for _, tc := range []struct {
		n1, n2 int
		want   float64
	}{{1, 1, 1}, {3, 3, 0.1}, {4, 4, 2.0 / 70}, {5, 5, 2.0 / 252}, {3, 5, 2.0 / 56}, {0, 5, 1}} {
		if got := MinP(tc.n1, tc.n2); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("MinP(%d, %d) = %g, want %g", tc.n1, tc.n2, got, tc.want)
		}
	}
	if n := MinWindows(0.05); n != 4 {
		t.Errorf("MinWindows(0.05) = %d, want 4", n)
	}
	if n := MinWindows(0.01); n != 5 {
		t.Errorf("MinWindows(0.01) = %d, want 5", n)
	}
}

func TestSteadyLevelIsOldsAndNewIsMatched(t *testing.T) {
	old := side("a", windows("kc", "discovery", 2, 500, 1, 4, 0), windows("kc", "discovery", 8, 900, 1, 4, 10))
	// NEW's best level is c=32; compared at OLD's c=8, with a note.
	new := side("b", windows("kc", "discovery", 2, 500, 1, 4, 20), windows("kc", "discovery", 8, 900, 1, 4, 30),
		windows("kc", "discovery", 32, 1200, 1, 4, 40))
	row := only(t, Compare(old, new, Options{}))
	if row.Connections != 8 || row.Status != StatusCompared {
		t.Fatalf("row %+v: want compared at c=8", row)
	}
	if !strings.Contains(strings.Join(row.Notes, ";"), "c=32") {
		t.Errorf("notes %q: want NEW's steady level", row.Notes)
	}
	all := Compare(old, new, Options{AllSteps: true})
	if len(all) != 3 || all[2].Status != StatusNewOnly || all[2].Connections != 32 {
		t.Errorf("all steps: %+v: want c=2, c=8 compared and c=32 NEW only", all)
	}
}

func TestCellsOnOneSideAreListed(t *testing.T) {
	a := side("a", windows("hydra", "discovery", 8, 900, 1, 4, 0), windows("hydra", "userinfo", 8, 900, 1, 4, 0))
	b := side("b", windows("hydra", "discovery", 8, 900, 1, 4, 10), windows("kc", "discovery", 8, 900, 1, 4, 10))
	rows := Compare(a, b, Options{})
	got := map[string]string{}
	for _, r := range rows {
		got[r.Product+" "+r.Scenario] = r.Status
	}
	want := map[string]string{"hydra discovery": StatusCompared, "hydra userinfo": StatusOldOnly, "kc discovery": StatusNewOnly}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: status %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	g, _ := ParseGate("qps<-5%")
	if v := g.Check(rows); len(v.Failed) != 0 {
		t.Errorf("without missing: %+v, want nothing failed", v)
	}
	g, _ = ParseGate("qps<-5%,missing")
	v := g.Check(rows)
	if len(v.Failed) != 1 || v.Failed[0].Row.Scenario != "userinfo" {
		t.Errorf("missing: %+v, want hydra userinfo only (a NEW-only cell is no regression)", v.Failed)
	}
}

func TestOtherRuleIsNotComparable(t *testing.T) {
	old := windows("hydra", "request", 8, 900, 1, 4, 0)
	new := windows("hydra", "request", 8, 900, 1, 4, 10)
	for _, w := range old {
		w.Step.Check = schema.Check2xx
	}
	for _, w := range new {
		w.Step.Check = schema.RequestCheck("issuer")
	}
	row := only(t, Compare(side("a", old), side("b", new), Options{AllSteps: true}))
	if row.Status != StatusNotComparable || !strings.Contains(row.Reason, "success rules") {
		t.Errorf("row %+v: want not comparable by rule", row)
	}
	g, _ := ParseGate("missing")
	if v := g.Check([]Row{row}); len(v.Failed) != 1 {
		t.Errorf("missing gate: %+v, want the not comparable row failed", v)
	}
}

func TestNoSteadyStateSaysWhy(t *testing.T) {
	old := windows("hydra", "discovery", 8, 900, 1, 4, 0)
	new := windows("hydra", "discovery", 8, 900, 1, 4, 10)
	for _, w := range new {
		w.Step.Driver.Limited = true
	}
	row := only(t, Compare(side("a", old), side("b", new), Options{}))
	if row.Status != StatusOldOnly || !strings.Contains(row.Reason, "driver-limited") {
		t.Errorf("row %+v: want OLD only, NEW driver-limited", row)
	}
}

func TestParseGate(t *testing.T) {
	g, err := ParseGate("qps<-5%, p99>+10%,p50>2.5%,missing")
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Rules) != 3 || !g.Missing || g.Rules[0].Pct != -5 || !g.Rules[0].Below || g.Rules[1].Pct != 10 || g.Rules[2].Pct != 2.5 {
		t.Errorf("parsed %+v", g)
	}
	for _, bad := range []struct{ spec, want string }{
		{"qps<-5", `"qps<-5"`},
		{"qps<5%", "must be negative"},
		{"p99>-10%", "must be positive"},
		{"p95>+10%", `unknown metric "p95"`},
		{"qps<-5%,,p99>+1%", "empty rule"},
		{"qps=-5%", "want METRIC"},
		{"qps<-x%", "not a number"},
		{"", "empty"},
	} {
		_, err := ParseGate(bad.spec)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseGate(%q) = %v, want an error containing %s", bad.spec, err, bad.want)
		}
	}
}

func TestGateFailsOnlySignificantCrossings(t *testing.T) {
	old := windows("hydra", "discovery", 8, 1000, 1, 6, 0)
	slower := windows("hydra", "discovery", 8, 900, 1, 6, 10)  // -10%, significant
	similar := windows("hydra", "discovery", 8, 980, 1, 6, 20) // -2%, significant but within -5%
	g, _ := ParseGate("qps<-5%,p99>+20%")
	v := g.Check(Compare(side("a", old), side("b", slower), Options{}))
	if len(v.Failed) != 1 || v.Failed[0].Rule != "qps<-5%" {
		t.Errorf("-10%%: %+v, want qps<-5%% failed (p99 +11%% is within +20%%)", v)
	}
	if v := g.Check(Compare(side("a", old), side("b", similar), Options{})); len(v.Failed)+len(v.Undecided) != 0 {
		t.Errorf("-2%%: %+v, want pass", v)
	}
}

func TestFormats(t *testing.T) {
	old := windows("hydra", "discovery", 8, 1000, 1, 6, 0)
	new := windows("hydra", "discovery", 8, 700, 1, 6, 10)
	rows := Compare(side("a", old), side("b", new), Options{})
	g, _ := ParseGate("qps<-5%")
	v := g.Check(rows)
	res := Result{Old: Describe(side("a", old)), New: Describe(side("b", new)), Alpha: 0.05, Rows: rows, Gate: &g, Verdict: &v}

	var md bytes.Buffer
	if err := Write(&md, res, FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| hydra | discovery | c=8 | 1,00", "**-30%** (p=0.002)", "**+43%**", "6+6", "Gate `qps<-5%`: 1 regression", "FAIL hydra discovery c=8"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}

	var js bytes.Buffer
	if err := Write(&js, res, FormatJSON); err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(js.Bytes(), &obj); err != nil {
		t.Fatalf("json: %v\n%s", err, js.String())
	}
	qps := obj["qps"].(map[string]any)
	if qps["significant"] != true || qps["delta_pct"].(float64) > -25 || obj["gate"] != "fail" {
		t.Errorf("json row %v", obj)
	}
	if w := obj["old"].(map[string]any)["windows"]; w != 6.0 {
		t.Errorf("old windows %v, want 6", w)
	}
	if _, ok := obj["p99_ms"]; !ok {
		t.Errorf("json lacks p99_ms: %v", obj)
	}

	var tsv bytes.Buffer
	if err := Write(&tsv, res, FormatTSV); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(tsv.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("tsv: %d lines, want header + 1:\n%s", len(lines), tsv.String())
	}
	head, row := strings.Split(lines[0], "\t"), strings.Split(lines[1], "\t")
	if len(head) != len(row) || head[0] != "product" || row[len(row)-2] != "fail" {
		t.Errorf("tsv header %q row %q", head, row)
	}
}

func TestUntestableRowsSayNothingAboutNoise(t *testing.T) {
	w := windows("hydra", "discovery", 8, 1000, 0, 1, 0)
	rows := Compare(side("a", w), side("b", w), Options{})
	var md bytes.Buffer
	if err := Write(&md, Result{Alpha: 0.05, Rows: rows}, FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"~ (too few windows: 0.0%)", "1 of 1 compared rows have too few windows", "1+1"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

func TestIntervalUnitCountsFullIntervals(t *testing.T) {
	old := windows("hydra", "discovery", 8, 1000, 1, 2, 0)
	new := windows("hydra", "discovery", 8, 1000, 1, 2, 10)
	for _, w := range append(old, new...) {
		w.Step.IntervalS = 1
		for i := range 3 {
			w.Step.Intervals = append(w.Step.Intervals, schema.Interval{TS: float64(i), LengthS: 1, QPS: w.Step.QPS + float64(i), P50MS: 1, P99MS: 2})
		}
		// A last, short interval is left out.
		w.Step.Intervals = append(w.Step.Intervals, schema.Interval{TS: 3, LengthS: 0.2, QPS: 1})
	}
	row := only(t, Compare(side("a", old), side("b", new), Options{Unit: UnitInterval}))
	if row.Old.Windows() != 6 || row.New.Windows() != 6 || !row.QPS.Testable {
		t.Errorf("interval unit: %d+%d samples (testable %v), want 6+6", row.Old.Windows(), row.New.Windows(), row.QPS.Testable)
	}
	row = only(t, Compare(side("a", old), side("b", new), Options{}))
	if row.Old.Windows() != 2 || row.QPS.Testable {
		t.Errorf("window unit: %d windows (testable %v), want 2, untestable", row.Old.Windows(), row.QPS.Testable)
	}
}

func TestOtherConnectionCountIsNotComparable(t *testing.T) {
	old := side("a", windows("hydra", "discovery", 8, 900, 1, 4, 0))
	new := side("b", windows("hydra", "discovery", 32, 1200, 1, 4, 10))
	row := only(t, Compare(old, new, Options{}))
	if row.Status != StatusNotComparable || !strings.Contains(row.Reason, "c=8") || !strings.Contains(row.Reason, "c=32") {
		t.Errorf("row %+v: want not comparable, naming both connection counts", row)
	}
	all := Compare(old, new, Options{AllSteps: true})
	if len(all) != 2 || all[0].Status != StatusOldOnly || all[1].Status != StatusNewOnly {
		t.Errorf("all steps: %+v: want c=8 OLD only, c=32 NEW only", all)
	}
}

func TestWindowsWithErrorsAreNotComparable(t *testing.T) {
	old := side("a", windows("hydra", "discovery", 2, 500, 1, 4, 0), windows("hydra", "discovery", 8, 900, 1, 4, 10))
	newWins := windows("hydra", "discovery", 8, 2000, 1, 4, 30) // fast 500s
	for _, w := range newWins {
		w.Step.Errors.Non2xx, w.Step.OK = w.Step.Requests/2, w.Step.Requests-w.Step.Requests/2
		w.Step.ErrorRate = 0.5
	}
	new := side("b", windows("hydra", "discovery", 2, 500, 1, 4, 20), newWins)
	row := only(t, Compare(old, new, Options{}))
	// NEW's steady state is c=2; at OLD's c=8 NEW failed half its requests.
	if row.Status != StatusNotComparable || !strings.Contains(row.Reason, "NEW window 1 of 4 at c=8: error rate 50%") {
		t.Errorf("row %+v: want not comparable, naming NEW's error rate", row)
	}
	g, _ := ParseGate("qps<-5%,missing")
	if v := g.Check([]Row{row}); len(v.Failed) != 1 {
		t.Errorf("gate %+v: want the row failed as missing", v)
	}
}

func TestAgreeComparesEachRunsOwnSteadyCell(t *testing.T) {
	// OLD steady at c=8 (900); NEW's steady moved to c=32 (1,200): the
	// reported numbers differ by 33% although c=8 agrees.
	old := side("a", windows("kc", "discovery", 2, 500, 1, 4, 0), windows("kc", "discovery", 8, 900, 1, 4, 10),
		windows("hy", "discovery", 8, 1000, 1, 4, 50))
	new := side("b", windows("kc", "discovery", 2, 500, 1, 4, 20), windows("kc", "discovery", 8, 900, 1, 4, 30),
		windows("kc", "discovery", 32, 1200, 1, 4, 40), windows("hy", "discovery", 8, 1030, 1, 4, 60))
	a := Agree(Compare(old, new, Options{}), 5)
	if a.Total != 2 || a.Agree != 1 || a.SameLvl != 1 || len(a.Cells) != 2 {
		t.Fatalf("agreement %+v: want 1 of 2 within 5%%, 1 of 2 at the same level", a)
	}
	for _, c := range a.Cells {
		switch c.Row.Product {
		case "kc":
			if c.Within || c.DeltaPct < 30 || c.Row.Reported.NewLevel != "c=32" {
				t.Errorf("kc: %+v: want +33%% at NEW's own c=32, outside", c)
			}
		case "hy":
			if !c.Within || c.DeltaPct < 2 || c.DeltaPct > 4 {
				t.Errorf("hy: %+v: want about +3%%, within", c)
			}
		}
	}
	var b strings.Builder
	writeAgreement(&b, a)
	for _, want := range []string{"**1 of 2 cells agree within ±5%** (50%)", "| kc | discovery | c=8 → c=32 |", "**no**"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("agreement section lacks %q:\n%s", want, b.String())
		}
	}
	if all := Agree(Compare(old, new, Options{AllSteps: true}), 5); all.Total != 0 || len(all.Cells) != 0 {
		t.Errorf("--all-steps rows have no reported cell: %+v", all)
	}
}

func TestAgreeListsCellsWithoutSteadyState(t *testing.T) {
	bad := windows("kc", "discovery", 8, 900, 1, 4, 10)
	for _, w := range bad {
		w.Step.ErrorRate, w.Step.Errors.Non2xx = 0.5, w.Step.Requests/2
	}
	a := Agree(Compare(side("a", windows("kc", "discovery", 8, 900, 1, 4, 0)), side("b", bad), Options{}), 5)
	if a.Total != 0 || len(a.Cells) != 1 || a.Cells[0].Why != "no steady state in NEW" {
		t.Errorf("agreement %+v: want the cell listed as no steady state in NEW, not counted", a)
	}
}

// cpuSamples: a sampler file of product's process tree at cpuPct, one
// record a second from t0 for secs seconds.
func cpuSamples(product string, cpuPct float64, secs int) model.SampleFile {
	var ss []schema.Sample
	for i := 0; i <= secs; i++ {
		ss = append(ss, schema.Sample{Schema: schema.SampleV1, T: t0.Add(time.Duration(i) * time.Second),
			Source: "process:" + product, RSSBytes: 1 << 20, CPUPct: cpuPct})
	}
	return model.SampleFile{Path: product + "/samples.jsonl", Samples: ss}
}

func TestAgreeCountsEfficiency(t *testing.T) {
	// Same throughput; NEW's IdP spends 25% more CPU per request: qps
	// agrees, req/CPU-s differs by -20%.
	old := side("a", windows("kc", "discovery", 8, 900, 1, 4, 0))
	old.Inputs.Samples = []model.SampleFile{cpuSamples("kc", 100, 60)}
	new := side("b", windows("kc", "discovery", 8, 900, 1, 4, 0))
	new.Inputs.Samples = []model.SampleFile{cpuSamples("kc", 125, 60)}
	a := Agree(Compare(old, new, Options{}), 5)
	if a.Total != 1 || a.Agree != 1 || a.EffTotal != 1 || a.EffAgree != 0 {
		t.Fatalf("agreement %+v: want qps within, req/CPU-s outside", a)
	}
	c := a.Cells[0]
	if !c.Row.Reported.OldEff.OK || math.Abs(c.Row.Reported.OldEff.Value-900) > 9 || math.Abs(c.EffDeltaPct+20) > 0.5 {
		t.Errorf("cell %+v: want OLD 900 req/CPU-s (900/s at one core), NEW -20%%", c)
	}
	if math.Abs(a.EffMedianPct-20) > 0.5 || a.MedianPct > 1 {
		t.Errorf("medians qps %.2f%%, req/CPU-s %.2f%%: want about 0 and 20", a.MedianPct, a.EffMedianPct)
	}
	var b strings.Builder
	writeAgreement(&b, a)
	for _, want := range []string{"Requests per CPU-second of the IdP (each report's req/CPU-s column): 0 of 1 cells within ±5%", "-20%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("agreement section lacks %q:\n%s", want, b.String())
		}
	}
	// Without sampler files there is no figure: not counted, rendered "–".
	a = Agree(Compare(side("a", windows("kc", "discovery", 8, 900, 1, 4, 0)), side("b", windows("kc", "discovery", 8, 900, 1, 4, 0)), Options{}), 5)
	if a.EffTotal != 0 || !math.IsNaN(a.Cells[0].EffDeltaPct) {
		t.Errorf("without samples: %+v, want no efficiency counted", a)
	}
}

// probeSamples: a sampler file of host records whose probe took us
// microseconds, one a second from t0 for secs seconds.
func probeSamples(us float64, secs int) model.SampleFile {
	var ss []schema.Sample
	for i := 0; i <= secs; i++ {
		ss = append(ss, schema.Sample{Schema: schema.SampleV1, T: t0.Add(time.Duration(i) * time.Second),
			Source: model.SourceHost, CPUPct: 90, ProbeUS: new(us)})
	}
	return model.SampleFile{Path: "host/samples.jsonl", Samples: ss}
}

func TestAgreeHostSpeed(t *testing.T) {
	// NEW is 10% slower and its host probe took 10% longer: the
	// agreement table says the host ran 9% slower (1000/1100 - 1).
	old := side("a", windows("kc", "discovery", 8, 1000, 1, 4, 0))
	old.Inputs.Samples = []model.SampleFile{probeSamples(1000, 60)}
	new := side("b", windows("kc", "discovery", 8, 900, 1, 4, 0))
	new.Inputs.Samples = []model.SampleFile{probeSamples(1100, 60)}
	a := Agree(Compare(old, new, Options{}), 5)
	if len(a.Cells) != 1 || math.Abs(a.Cells[0].HostDeltaPct+9.09) > 0.01 {
		t.Fatalf("cells %+v: want the host 9.1%% slower in NEW", a.Cells)
	}
	// 10% fewer requests on cores 9.1% slower: at one host speed, -1%
	// (0.9 / (1000/1100)), within 5%, though the measured Δ is not.
	if c := a.Cells[0]; c.Within || !c.EqualHostWithin || math.Abs(c.EqualHostDeltaPct+1) > 0.2 || a.HostAgree != 1 || a.HostTotal != 1 {
		t.Errorf("cell %+v, agreement %d of %d at one host speed: want -1%% within, the measured -10%% outside", c, a.HostAgree, a.HostTotal)
	}
	var b strings.Builder
	writeAgreement(&b, a)
	for _, want := range []string{"| -9.1% |", "At one host speed (Δ qps with the Δ host speed taken out): 1 of 1 cells within ±5%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("agreement section lacks %q:\n%s", want, b.String())
		}
	}
	// One side without a probe (an older sampler): no figure, "–".
	a = Agree(Compare(old, side("b", windows("kc", "discovery", 8, 900, 1, 4, 0)), Options{}), 5)
	if !math.IsNaN(a.Cells[0].HostDeltaPct) || !math.IsNaN(a.Cells[0].EqualHostDeltaPct) || a.HostTotal != 0 {
		t.Errorf("NEW without a probe: host speed %v, at one host speed %v (%d cells): want none",
			a.Cells[0].HostDeltaPct, a.Cells[0].EqualHostDeltaPct, a.HostTotal)
	}
}
