package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/recordtest"
	"github.com/idpbench/idpbench/internal/schema"
)

// TestPairs: the report pairs two products' windows by round (round 1,
// the level search, is not paired; a window that does not qualify leaves
// a round one side lacks is left out), its A/A pair from the twin's windows; the first screen
// ranks by capacity, each product a share of the fastest with the
// interval and verdict, the reference apart; the chart draws a panel per
// scenario.
func TestPairs(t *testing.T) {
	sc := schema.ScenarioDiscovery
	var in model.Inputs
	// a: 1000/s; b: 800/s, 0.8 of a in every round, then 0.82 (round 5); ref 5000/s.
	for k := 1; k <= 5; k++ {
		b := 800.0
		if k == 5 {
			b = 820
		}
		in.Steps = append(in.Steps, recordtest.RoundStep("a", sc, k, 1000, false), recordtest.RoundStep("b", sc, k, b, false), recordtest.RoundStep("ref", sc, k, 5000, false))
		if k >= 2 {
			in.Steps = append(in.Steps, recordtest.RoundStep("a", sc, k, 1000*(1+0.01*float64(k%2)), true))
		}
	}
	in.Steps = append(in.Steps[:3], in.Steps[4:]...) // no round-2 window of a
	r := model.Build(&in, model.Options{References: []string{"ref"}})
	// b over a: below 1 in every round, so the verdict is "B faster" (a).
	p, ok := r.Pair(sc, "b", "a")
	if want := math.Pow(0.8*0.8*0.82, 1.0/3); !ok || len(p.Rounds) != 3 || p.Rounds[0] != 3 || !p.OK() || p.Verdict() != model.PairBFaster || math.Abs(p.Center-want) > 1e-9 {
		t.Errorf("b / a: %+v (rounds %v), want rounds 3-5, %.4f, a faster", p, p.Rounds, want)
	}
	if len(r.Twins) != 1 || r.Twins[0].A != "a" || r.Twins[0].N != 3 || !r.Twins[0].Covers1() {
		t.Errorf("A/A pairs %+v, want a against its twin over rounds 3-5, holding 1", r.Twins)
	}
	if len(r.Verdicts) != 1 || len(r.Verdicts[0].Ranked) != 2 || r.Verdicts[0].Ranked[0].Product != "a" || len(r.Verdicts[0].Reference) != 1 {
		t.Fatalf("verdicts %+v, want a then b, ref apart", r.Verdicts)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, r, MarkdownOptions{ChartsDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	first := strings.Join(strings.SplitN(md.String(), "\n", 41)[:40], "\n")
	if !strings.Contains(first, "| S1 discovery | a ") || !strings.Contains(first, "b 0.81× [") || !strings.Contains(first, "ref 5,000/s, 5.0×") || !strings.Contains(first, "verdict.svg") {
		t.Errorf("the first 40 lines:\n%s\nwant the verdict row (a fastest, b 0.81× with its interval, ref apart) and the chart", first)
	}
	var svg bytes.Buffer
	if err := WriteMultiples(&svg, r.VerdictMultiples()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-panel="S1 discovery"`, ">a<", ">b<", ">ref<", "fill=\"#aaaaaa\"", "0.81×"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("chart lacks %q:\n%s", want, svg.String())
		}
	}
}
