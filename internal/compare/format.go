package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/steps"
)

// Formats of the output.
const (
	FormatMarkdown = "md"
	FormatJSON     = "json"
	FormatTSV      = "tsv"
)

// Formats lists the output formats.
func Formats() []string { return []string{FormatMarkdown, FormatJSON, FormatTSV} }

// Result is a comparison ready to print.
type Result struct {
	Old, New SideInfo
	Alpha    float64
	AllSteps bool
	Unit     string // Options.Unit
	Rows     []Row
	Gate     *Gate // nil without --fail-on
	// Agreement is set with --agree: each side's reported steady
	// throughput against a bound.
	Agreement *Agreement
	Verdict   *Verdict // set with Gate
	// Footprints: each product's cold starts and memory on both sides
	// (--footprint; Markdown only).
	Footprints []Footprint
}

// SideInfo describes one input for the header.
type SideInfo struct {
	Name       string
	Start, End time.Time // measured windows, earliest start to latest end
	Tools      []string  // loadstep versions
	CPUs       []string  // the processors the steps ran on (schema.Host.CPU); none in older records
}

// Describe returns the header facts of a side.
func Describe(s Side) SideInfo {
	info := SideInfo{Name: s.Name}
	for _, sf := range s.Inputs.Steps {
		st := sf.Step
		if info.Start.IsZero() || st.Start.Before(info.Start) {
			info.Start = st.Start
		}
		if st.End.After(info.End) {
			info.End = st.End
		}
		if st.ToolVersion != "" && !slices.Contains(info.Tools, st.ToolVersion) {
			info.Tools = append(info.Tools, st.ToolVersion)
		}
		if cpu := st.Host.CPU; cpu != "" && !slices.Contains(info.CPUs, cpu) {
			info.CPUs = append(info.CPUs, cpu)
		}
	}
	return info
}

// Write prints r in format.
func Write(w io.Writer, r Result, format string) error {
	var err error
	switch format {
	case FormatJSON:
		err = writeJSON(w, r)
	case FormatTSV:
		err = writeTSV(w, r)
	default:
		err = writeMarkdown(w, r)
	}
	if err != nil {
		return fmt.Errorf("writing the comparison: %w", err)
	}
	return nil
}

func (s SideInfo) String() string {
	out := "`" + s.Name + "`"
	if !s.Start.IsZero() {
		out += fmt.Sprintf(", measured %s – %s", s.Start.UTC().Format("2006-01-02 15:04"), s.End.UTC().Format("15:04 UTC"))
	}
	if len(s.Tools) > 0 {
		out += ", loadstep " + strings.Join(s.Tools, ", ")
	}
	if len(s.CPUs) > 0 {
		out += ", on " + strings.Join(s.CPUs, "; ")
	}
	return out
}

// otherCPUs says when the two sides ran on processors that differ: a
// difference between them is the machine's as much as the product's.
func otherCPUs(o, n SideInfo) string {
	if len(o.CPUs) == 0 || len(n.CPUs) == 0 || slices.Equal(o.CPUs, n.CPUs) {
		return ""
	}
	return fmt.Sprintf("- **The sides ran on different processors** (OLD %s; NEW %s): a difference is the machine's as much as the product's.\n",
		strings.Join(o.CPUs, ", "), strings.Join(n.CPUs, ", "))
}

func writeMarkdown(w io.Writer, r Result) error {
	var b strings.Builder
	b.WriteString("## idpbench compare\n\n")
	fmt.Fprintf(&b, "- OLD: %s\n- NEW: %s\n", r.Old, r.New)
	b.WriteString(otherCPUs(r.Old, r.New))
	if r.Unit == UnitInterval {
		b.WriteString("- **Samples are one-second intervals (`--unit interval`): they are not independent, and this test calls most differences between two windows of one unchanged target significant. For studying noise, not for verdicts.**\n")
	}
	fmt.Fprintf(&b, "- %s; %s. "+
		"`~`: no significant difference at alpha %g. Figures: median ±%g%% confidence interval of the median (∞: fewer than %d windows). "+
		"A difference can be significant only with >= %d windows per side. qps: requests/s (iterations/s in iteration scenarios); p50, p99 in ms.\n",
		steadyWhat(r.AllSteps), sampleWhat(r.Unit), r.Alpha, 100*Confidence, minCIWindows(), MinWindows(r.Alpha))
	if n, total := untestable(r.Rows); n > 0 {
		fmt.Fprintf(&b, "- **%d of %d compared rows have too few windows to test a difference** (fewer than %d per side): their `~` says nothing about noise. Measure again with `--repeats 5`.\n",
			n, total, MinWindows(r.Alpha))
	}
	if vs := versionChanges(r.Rows); vs != "" {
		b.WriteString("- Versions: " + vs + "\n")
	}
	capHead, capRule := "", ""
	if hasCapacity(r.Rows) {
		capHead, capRule = " capacity OLD → NEW | Δ capacity |", "--:|--:|"
	}
	b.WriteString("\n| product | scenario | level |" + capHead + " qps OLD → NEW | Δ qps | p50 ms OLD → NEW | Δ p50 | p99 ms OLD → NEW | Δ p99 | windows | note |\n")
	b.WriteString("|---|---|---|" + capRule + "--:|--:|--:|--:|--:|--:|--:|---|\n")
	var na []Row
	for _, row := range r.Rows {
		if row.Status == StatusNA {
			na = append(na, row)
			continue
		}
		capCells := ""
		if capHead != "" {
			capCells = " " + capacityCells(row.Capacity) + " |"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |%s %s | %s | %s | %s | %s | %s | %s | %s |\n",
			mdCell(row.Product), row.Scenario, levelName(row.Connections, row.RateRPS), capCells,
			pair(row, func(f *Figures) Stat { return f.QPS }, steps.FormatQPS), deltaCell(row, row.QPS),
			pair(row, func(f *Figures) Stat { return f.P50MS }, steps.FormatMS), deltaCell(row, row.P50),
			pair(row, func(f *Figures) Stat { return f.P99MS }, steps.FormatMS), deltaCell(row, row.P99),
			windowsCell(row), mdCell(noteText(row)))
	}
	if len(na) > 0 {
		b.WriteString("\nN/A on both sides (no ladder step measured them):\n\n")
		for _, row := range na {
			fmt.Fprintf(&b, "- %s %s: %s\n", row.Product, row.Scenario, row.Reason)
		}
	}
	writeRefTable(&b, r.Rows)
	if len(r.Footprints) > 0 {
		writeFootprints(&b, r.Footprints)
	}
	if r.Agreement != nil {
		writeAgreement(&b, *r.Agreement)
	}
	if r.Gate != nil {
		b.WriteString("\n" + gateText(r))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// hasCapacity reports whether a row has both sides' capacities (steady mode).
func hasCapacity(rows []Row) bool {
	return slices.ContainsFunc(rows, func(r Row) bool { return r.Capacity != nil })
}

// capacityCells is a row's "capacity OLD → NEW | Δ capacity" (the pooled
// plateau windows, at OLD's host speed where both have a slope; "(raw)"
// otherwise), "— | —" without both capacities.
func capacityCells(c *CapacityDelta) string {
	if c == nil {
		return "— | —"
	}
	side := func(s Stat) string { return steps.FormatQPS(s.Median) + " " + spread(s) }
	basis := ""
	if c.Basis == "raw" {
		basis = " (raw)"
	}
	return side(c.Old) + " → " + side(c.New) + basis + " | " + deltaCell(Row{Status: StatusCompared}, c.Delta)
}

func steadyWhat(all bool) string {
	if all {
		return "Every ladder level, matched by connections (and rate); two-sided Mann-Whitney U test"
	}
	return "Each cell at OLD's steady-state level, matched in NEW by connections (and rate); two-sided Mann-Whitney U test"
}

// untestable counts the compared rows whose qps change cannot be tested.
func untestable(rows []Row) (n, compared int) {
	for _, row := range rows {
		if row.Status == StatusCompared {
			compared++
			if !row.QPS.Testable {
				n++
			}
		}
	}
	return n, compared
}

func sampleWhat(unit string) string {
	if unit == UnitInterval {
		return "one sample per full interval of every window"
	}
	return "one sample per measured window (repeated windows: `--repeats N`)"
}

// minCIWindows is the number of windows a median's confidence interval needs.
func minCIWindows() int {
	for n := 2; n < 100; n++ {
		if !math.IsInf(summarise(make([]float64, n)).Lo, 0) {
			return n
		}
	}
	return 100
}

// versionChanges lists each product's versions: "hydra v2.3.0 → v2.4.0".
func versionChanges(rows []Row) string {
	var out []string
	seen := map[string]bool{}
	for _, row := range rows {
		if seen[row.Product] || row.Old == nil || row.New == nil || row.Old.Version+row.New.Version == "" {
			continue
		}
		seen[row.Product] = true
		out = append(out, fmt.Sprintf("%s %s → %s", row.Product, orDash(row.Old.Version), orDash(row.New.Version)))
	}
	return strings.Join(out, "; ")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// mdCell escapes a table cell's pipes.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// pair renders "2,365 ±3% → 2,301 ±2%"; "—" for a side without figures.
func pair(row Row, get func(*Figures) Stat, format func(float64) string) string {
	side := func(f *Figures) string {
		if f == nil {
			return "—"
		}
		s := get(f)
		if s.N == 1 {
			return format(s.Median)
		}
		return format(s.Median) + " " + spread(s)
	}
	return side(row.Old) + " → " + side(row.New)
}

// spread renders a confidence interval's half-width: "±3%", "±∞".
func spread(s Stat) string {
	h := s.HalfWidthPct()
	if math.IsInf(h, 0) {
		return "±∞"
	}
	return "±" + strconv.FormatFloat(h, 'f', decimals(h), 64) + "%"
}

func decimals(pct float64) int {
	if math.Abs(pct) < 10 {
		return 1
	}
	return 0
}

// deltaCell: "**-12.3%** (p=0.008)", "~ (p=0.690)", "~ (too few windows: -3.1%)".
func deltaCell(row Row, d Delta) string {
	switch {
	case row.Status != StatusCompared:
		return "—"
	case !d.Testable:
		return "~ (too few windows: " + formatPct(d.Pct) + ")"
	case !d.Significant:
		return "~ (" + formatP(d) + ")"
	}
	return "**" + formatPct(d.Pct) + "** (" + formatP(d) + ")"
}

func formatPct(p float64) string {
	if math.IsInf(p, 0) || math.IsNaN(p) {
		return "n/a"
	}
	s := strconv.FormatFloat(p, 'f', decimals(p), 64) + "%"
	if p > 0 && s != "0.0%" {
		s = "+" + s
	}
	return s
}

func formatP(d Delta) string {
	return "p=" + strconv.FormatFloat(d.P, 'f', 3, 64)
}

func windowsCell(row Row) string {
	n := func(f *Figures) string {
		if f == nil {
			return "0"
		}
		return strconv.Itoa(f.Windows())
	}
	return n(row.Old) + "+" + n(row.New)
}

// noteText is the row's status, reason and notes in words.
func noteText(row Row) string {
	var parts []string
	switch row.Status {
	case StatusOldOnly:
		parts = append(parts, "OLD only: "+row.Reason)
	case StatusNewOnly:
		parts = append(parts, "NEW only: "+row.Reason)
	case StatusNotComparable:
		parts = append(parts, "not comparable: "+row.Reason)
	case StatusNA:
		parts = append(parts, "N/A: "+row.Reason)
	}
	parts = append(parts, row.Notes...)
	return strings.Join(parts, "; ")
}

func gateText(r Result) string {
	var b strings.Builder
	v := r.Verdict
	fmt.Fprintf(&b, "### Gate `%s`: %s\n\n", r.Gate.Spec, v.Summary())
	for _, f := range v.Failed {
		fmt.Fprintf(&b, "- FAIL %s: %s\n", f.Row.Key(), mdCell(f.Why))
	}
	for _, f := range v.Undecided {
		fmt.Fprintf(&b, "- UNDECIDED %s: %s\n", f.Row.Key(), mdCell(f.Why))
	}
	return b.String()
}

// Summary is the verdict in a few words.
func (v Verdict) Summary() string {
	switch {
	case len(v.Failed) > 0:
		return fmt.Sprintf("%d regression(s)", len(v.Failed))
	case len(v.Undecided) > 0:
		return fmt.Sprintf("undecided: %d change(s) cross a threshold with too few windows to test", len(v.Undecided))
	}
	return "pass (no significant change crosses a threshold)"
}

// --- JSON and TSV ---------------------------------------------------------

// jsonRow is one row of --format json: units in the field names.
type jsonRow struct {
	Product     string    `json:"product"`
	Scenario    string    `json:"scenario"`
	Connections int       `json:"connections"`
	RateRPS     float64   `json:"rate_rps,omitempty"`
	Status      string    `json:"status"`
	Reason      string    `json:"reason,omitempty"`
	Notes       []string  `json:"notes,omitempty"`
	Old         *jsonSide `json:"old,omitempty"`
	New         *jsonSide `json:"new,omitempty"`
	QPS         *jsonDiff `json:"qps,omitempty"`
	P50MS       *jsonDiff `json:"p50_ms,omitempty"`
	P99MS       *jsonDiff `json:"p99_ms,omitempty"`
	Alpha       float64   `json:"alpha"`
	Gate        string    `json:"gate,omitempty"` // "fail" | "undecided" with --fail-on
}

type jsonSide struct {
	Windows int      `json:"windows"`
	Check   string   `json:"check"`
	Version string   `json:"product_version,omitempty"`
	Files   []string `json:"files"`
	QPS     jsonStat `json:"qps"`
	P50MS   jsonStat `json:"p50_ms"`
	P99MS   jsonStat `json:"p99_ms"`
}

// jsonStat: CI bounds are null without an interval.
type jsonStat struct {
	Median float64  `json:"median"`
	CILo   *float64 `json:"ci95_lo"`
	CIHi   *float64 `json:"ci95_hi"`
	Min    float64  `json:"min"`
	Max    float64  `json:"max"`
}

type jsonDiff struct {
	DeltaPct    *float64 `json:"delta_pct"` // null when OLD's median is 0
	P           float64  `json:"p"`
	Testable    bool     `json:"testable"`
	Significant bool     `json:"significant"`
}

func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

func toJSONStat(s Stat) jsonStat {
	return jsonStat{Median: s.Median, CILo: finite(s.Lo), CIHi: finite(s.Hi), Min: s.Min, Max: s.Max}
}

func toJSONSide(f *Figures) *jsonSide {
	if f == nil {
		return nil
	}
	return &jsonSide{Windows: f.Windows(), Check: f.Check, Version: f.Version, Files: f.Files,
		QPS: toJSONStat(f.QPS), P50MS: toJSONStat(f.P50MS), P99MS: toJSONStat(f.P99MS)}
}

func toJSONDiff(row Row, d Delta) *jsonDiff {
	if row.Status != StatusCompared {
		return nil
	}
	return &jsonDiff{DeltaPct: finite(d.Pct), P: d.P, Testable: d.Testable, Significant: d.Significant}
}

// gateMark says what the gate found on a row: "fail", "undecided" or "".
func gateMark(r Result, row Row) string {
	if r.Verdict == nil {
		return ""
	}
	for _, f := range r.Verdict.Failed {
		if f.Row.Key() == row.Key() {
			return "fail"
		}
	}
	for _, f := range r.Verdict.Undecided {
		if f.Row.Key() == row.Key() {
			return "undecided"
		}
	}
	return ""
}

func writeJSON(w io.Writer, r Result) error {
	enc := json.NewEncoder(w)
	for _, row := range r.Rows {
		jr := jsonRow{Product: row.Product, Scenario: row.Scenario, Connections: row.Connections, RateRPS: row.RateRPS,
			Status: row.Status, Reason: row.Reason, Notes: row.Notes, Old: toJSONSide(row.Old), New: toJSONSide(row.New),
			QPS: toJSONDiff(row, row.QPS), P50MS: toJSONDiff(row, row.P50), P99MS: toJSONDiff(row, row.P99),
			Alpha: r.Alpha, Gate: gateMark(r, row)}
		if err := enc.Encode(jr); err != nil {
			return err
		}
	}
	return nil
}

// tsvHeader names the columns of --format tsv.
var tsvHeader = []string{"product", "scenario", "connections", "rate_rps", "status",
	"windows_old", "windows_new",
	"qps_old", "qps_new", "qps_delta_pct", "qps_p", "qps_significant",
	"p50_ms_old", "p50_ms_new", "p50_delta_pct", "p50_p", "p50_significant",
	"p99_ms_old", "p99_ms_new", "p99_delta_pct", "p99_p", "p99_significant",
	"gate", "note"}

// tsvSafe keeps a cell on its line and in its column.
var tsvSafe = strings.NewReplacer("\t", " ", "\n", " ")

func writeTSV(w io.Writer, r Result) error {
	var b strings.Builder
	b.WriteString(strings.Join(tsvHeader, "\t") + "\n")
	num := func(v float64) string {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	med := func(f *Figures, get func(*Figures) Stat) string {
		if f == nil {
			return ""
		}
		return num(get(f).Median)
	}
	wins := func(f *Figures) string {
		if f == nil {
			return "0"
		}
		return strconv.Itoa(f.Windows())
	}
	diff := func(row Row, d Delta) []string {
		if row.Status != StatusCompared {
			return []string{"", "", ""}
		}
		return []string{num(d.Pct), num(d.P), strconv.FormatBool(d.Significant)}
	}
	for _, row := range r.Rows {
		cols := []string{row.Product, row.Scenario, strconv.Itoa(row.Connections), num(row.RateRPS), row.Status,
			wins(row.Old), wins(row.New)}
		cols = append(cols, med(row.Old, func(f *Figures) Stat { return f.QPS }), med(row.New, func(f *Figures) Stat { return f.QPS }))
		cols = append(cols, diff(row, row.QPS)...)
		cols = append(cols, med(row.Old, func(f *Figures) Stat { return f.P50MS }), med(row.New, func(f *Figures) Stat { return f.P50MS }))
		cols = append(cols, diff(row, row.P50)...)
		cols = append(cols, med(row.Old, func(f *Figures) Stat { return f.P99MS }), med(row.New, func(f *Figures) Stat { return f.P99MS }))
		cols = append(cols, diff(row, row.P99)...)
		cols = append(cols, gateMark(r, row), noteText(row))
		for i, c := range cols {
			cols[i] = tsvSafe.Replace(c)
		}
		b.WriteString(strings.Join(cols, "\t") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
