package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Metrics a gate rule may name.
const (
	MetricQPS = "qps"
	MetricP50 = "p50"
	MetricP99 = "p99"
	// MetricCapacity is the cell's capacity (report.Capacity): the windows
	// of each side's plateau, at OLD's reference host speed where both
	// sides have a host slope; each side at its own plateau.
	MetricCapacity = "capacity"
	// MetricRef is the cell's ratio to the reference product, paired
	// within each run's interleaved rounds (RefDelta).
	MetricRef = "ref"
)

// Gate is a parsed --fail-on: thresholds on significant changes, and
// whether a cell missing from NEW fails.
type Gate struct {
	Spec    string
	Rules   []Rule
	Missing bool // the token "missing": a cell of OLD absent, N/A or not comparable in NEW fails
}

// Rule is one threshold: METRIC<-N% or METRIC>+N%.
type Rule struct {
	Metric string
	Below  bool    // "<": fails when the delta is below Pct; ">": above
	Pct    float64 // signed percent
	Token  string  // as written
}

func (r Rule) crossed(pct float64) bool {
	if r.Below {
		return pct < r.Pct
	}
	return pct > r.Pct
}

// ParseGate parses a comma-separated list of rules, e.g.
// "qps<-5%,p99>+10%,missing". An error names the token.
func ParseGate(spec string) (Gate, error) {
	g := Gate{Spec: spec}
	if strings.TrimSpace(spec) == "" {
		return g, fmt.Errorf("empty: want rules like 'qps<-5%%,p99>+10%%'")
	}
	for tok := range strings.SplitSeq(spec, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "missing" {
			g.Missing = true
			continue
		}
		r, err := parseRule(tok)
		if err != nil {
			return g, fmt.Errorf("token %q: %w", tok, err)
		}
		g.Rules = append(g.Rules, r)
	}
	return g, nil
}

func parseRule(tok string) (Rule, error) {
	i := strings.IndexAny(tok, "<>")
	if tok == "" {
		return Rule{}, fmt.Errorf("empty rule (two commas in a row?)")
	}
	if i < 0 {
		return Rule{}, fmt.Errorf("want METRIC<-N%% or METRIC>+N%% (METRIC: qps, p50, p99, capacity, ref), or missing")
	}
	r := Rule{Metric: strings.TrimSpace(tok[:i]), Below: tok[i] == '<', Token: tok}
	switch r.Metric {
	case MetricQPS, MetricP50, MetricP99, MetricCapacity, MetricRef:
	default:
		return Rule{}, fmt.Errorf("unknown metric %q: want qps, p50, p99, capacity or ref", r.Metric)
	}
	num, ok := strings.CutSuffix(strings.TrimSpace(tok[i+1:]), "%")
	if !ok {
		return Rule{}, fmt.Errorf("the threshold must be a percentage, e.g. %s%c-5%%", r.Metric, tok[i])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Rule{}, fmt.Errorf("threshold %q%%: not a number", num)
	}
	switch {
	case r.Below && v > 0:
		return Rule{}, fmt.Errorf("a threshold below must be negative: %s<-%g%% fails when %s drops by more than %g%%", r.Metric, v, r.Metric, v)
	case !r.Below && v < 0:
		return Rule{}, fmt.Errorf("a threshold above must be positive: %s>+%g%% fails when %s grows by more than %g%%", r.Metric, -v, r.Metric, -v)
	}
	r.Pct = v
	return r, nil
}

// Finding is one row the gate fails (or cannot decide) on, and why.
type Finding struct {
	Row  Row
	Why  string // "qps -12.3% (p=0.008) crosses qps<-5%"
	Rule string // the token, or "missing"
}

// Verdict is the gate's judgement of a comparison.
type Verdict struct {
	Failed    []Finding // significant changes across a threshold; missing cells
	Undecided []Finding // deltas across a threshold with too few windows to test
}

// Check judges rows: a row fails a rule when its change is significant and
// crosses the threshold; a change that crosses it with too few windows for
// a test is undecided; a change within noise passes.
func (g Gate) Check(rows []Row) Verdict {
	var v Verdict
	for _, row := range rows {
		g.checkCapacity(row, &v)
		g.checkRef(row, &v)
		if row.Status != StatusCompared {
			if g.Missing && row.Status != StatusNewOnly && row.Status != StatusNA {
				v.Failed = append(v.Failed, Finding{row, "missing from NEW or not comparable: " + row.Reason, "missing"})
			}
			continue
		}
		for _, r := range g.Rules {
			if r.Metric == MetricCapacity || r.Metric == MetricRef {
				continue
			}
			d := row.delta(r.Metric)
			if !r.crossed(d.Pct) {
				continue
			}
			why := fmt.Sprintf("%s %s (%s) crosses %s", r.Metric, formatPct(d.Pct), formatP(d), r.Token)
			switch {
			case d.Significant:
				v.Failed = append(v.Failed, Finding{row, why, r.Token})
			case !d.Testable:
				v.Undecided = append(v.Undecided, Finding{row, why + ", but " + tooFew(row), r.Token})
			}
		}
	}
	return v
}

// checkCapacity judges the capacity rules on a row whose both sides have
// a capacity, whatever their steady levels (the capacity pools the
// plateau, so it does not hang on which level won).
func (g Gate) checkCapacity(row Row, v *Verdict) {
	if row.Capacity == nil {
		return
	}
	d := row.Capacity.Delta
	for _, r := range g.Rules {
		if r.Metric != MetricCapacity || !r.crossed(d.Pct) {
			continue
		}
		why := fmt.Sprintf("capacity %s (%s, %s) crosses %s", formatPct(d.Pct), formatP(d), row.Capacity.Basis, r.Token)
		switch {
		case d.Significant:
			v.Failed = append(v.Failed, Finding{row, why, r.Token})
		case !d.Testable:
			v.Undecided = append(v.Undecided, Finding{row, why + fmt.Sprintf(", but %d+%d windows are too few to tell", row.Capacity.Old.N, row.Capacity.New.N), r.Token})
		}
	}
}

// checkRef judges a row's ratio to the reference (RefDelta) by the ref rules.
func (g Gate) checkRef(row Row, v *Verdict) {
	if row.Ref == nil {
		return
	}
	d := row.Ref.Delta
	for _, r := range g.Rules {
		if r.Metric != MetricRef || !r.crossed(d.Pct) {
			continue
		}
		why := fmt.Sprintf("ratio to %s %s (%s) crosses %s", row.Ref.Reference, formatPct(d.Pct), formatP(d), r.Token)
		switch {
		case d.Significant:
			v.Failed = append(v.Failed, Finding{row, why, r.Token})
		case !d.Testable:
			v.Undecided = append(v.Undecided, Finding{row, why + fmt.Sprintf(", but %d+%d rounds are too few to tell", row.Ref.Old.N, row.Ref.New.N), r.Token})
		}
	}
}

func (r Row) delta(metric string) Delta {
	switch metric {
	case MetricP50:
		return r.P50
	case MetricP99:
		return r.P99
	}
	return r.QPS
}

// tooFew explains an untestable row: "2+2 windows: too few to test (4 per side needed at alpha 0.05)".
func tooFew(r Row) string {
	return fmt.Sprintf("%d+%d windows are too few to tell", r.Old.Windows(), r.New.Windows())
}
