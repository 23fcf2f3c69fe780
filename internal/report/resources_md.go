package report

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// fig renders a figure with format, or "N/A: reason".
func fig(f model.Figure, format func(float64) string) string {
	if !f.OK {
		return "N/A: " + cell(f.NA)
	}
	return format(f.Value)
}

func formatMiB(v float64) string { return steps.SigOrInt(v, 3) }

func formatCPU(v float64) string { return steps.Percent(v) }

// formatCount renders a count or the median of counts: "12", "1,024", "12.5".
func formatCount(v float64) string {
	if v == math.Trunc(v) {
		return steps.Thousands(int64(v))
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// memKinds says what the memory figures of res measure.
func memKinds(res model.Resources) string {
	switch {
	case res.IdPMem == "" && res.DBMem == "":
		return "–"
	case res.IdPMem == res.DBMem || !res.DBRSS.OK:
		return cmp.Or(res.IdPMem, res.DBMem)
	}
	return "IdP " + res.IdPMem + ", PostgreSQL " + res.DBMem
}

func (m *md) memoryColdJitter() {
	m.printf("## Memory, cold start and GC jitter\n\n")
	m.printf("### Memory at steady state\n\n")
	m.printf("| Product | IdP MiB | PostgreSQL MiB | Full stack MiB | Measured as | Windows | Records in windows | IdP source |\n")
	m.printf("|---|--:|--:|--:|---|--:|--:|---|\n")
	for _, res := range m.r.Resources {
		m.printf("| %s | %s | %s | %s | %s | %d | %d | %s |\n", res.Product, fig(res.IdPRSS, formatMiB), fig(res.DBRSS, formatMiB),
			fig(res.StackRSS, formatMiB), memKinds(res), res.Windows, res.InWindows, orNone(res.IdPSource))
	}
	m.printf("\nPSS divides shared pages among the processes that map them; RSS summed over a process\n")
	m.printf("tree counts them once per process (every PostgreSQL backend maps shared_buffers), so it\n")
	m.printf("overstates a multi-process server. PSS is used wherever the sampler could read it.\n")
	if slices.ContainsFunc(m.r.Resources, func(r model.Resources) bool { return r.IdPMem == model.MemCgroup || r.DBMem == model.MemCgroup }) {
		m.printf("In compose mode the sampler reads each container's cgroup (\"cgroup\": the memory the\n")
		m.printf("kernel charges to the container, the figure its memory limit applies to).\n")
	}
	m.runUsageTable()
	m.printf("\n### Cold start\n\n")
	m.printf("| Product | A: fresh database, s to ready | A: peak MiB | B: restart, s to ready | B: peak MiB |\n")
	m.printf("|---|--:|--:|--:|--:|\n")
	cgroup := false
	for _, c := range m.r.Cold {
		m.printf("| %s | %s | %s |\n", c.Product, m.coldCells(c.A), m.coldCells(c.B))
		cgroup = cgroup || c.A.PeakOfContainers() || c.B.PeakOfContainers()
	}
	m.printf("\nPeak: the RSS of the product's process tree from start to ready.\n")
	if cgroup {
		m.printf("\"(cgroup)\": in compose mode, the memory of the product's containers (every service's but\n" +
			"the database's), usage minus inactive page cache, summed: not the same measure as RSS.\n")
	}
	m.printf("\n### GC jitter\n\n")
	m.printf("| Product | Run | Intervals | P99 min ms | P99 median ms | P99 max ms | Gaps |\n")
	m.printf("|---|---|--:|--:|--:|--:|---|\n")
	for _, j := range m.r.Jitter {
		m.jitterRow(j)
	}
	m.printf("\n")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// coldCells renders the two cells of one mode.
func (m *md) coldCells(c model.Coldstart) string {
	if c.NA != "" {
		return "N/A: " + cell(c.NA) + " | N/A"
	}
	rec := c.File.Coldstart
	peak := formatMiB(float64(rec.PeakRSSBytes) / model.BytesPerMiB)
	if rec.PeakMeasuredAs != "" {
		peak += " (" + rec.PeakMeasuredAs + ")"
	}
	return fmt.Sprintf("%s (%s) | %s", steps.FormatMS(rec.SecondsToReady), m.link(c.File.Path), peak)
}

func (m *md) jitterRow(j model.Jitter) {
	if j.File.Step == nil {
		m.printf("| %s | N/A: %s | – | – | – | – | – |\n", j.Product, cell(j.NA))
		return
	}
	s := j.File.Step
	run := fmt.Sprintf("%s c=%d, %s, %s intervals (%s)", scenarioLabel(s.Scenario), s.Connections,
		steps.FormatSeconds(s.DurationS), steps.FormatSeconds(s.IntervalS), m.link(j.File.Path))
	if s.Status != schema.StatusComplete {
		run += ", " + s.Status
	}
	gaps := "none"
	if len(j.Gaps) > 0 {
		gaps = "**" + cell(strings.Join(j.Gaps, "; ")) + "**"
	}
	if j.NA != "" {
		m.printf("| %s | %s | %d | N/A: %s | – | – | %s |\n", j.Product, run, len(s.Intervals), cell(j.NA), gaps)
		return
	}
	m.printf("| %s | %s | %d | %s | %s | %s | %s |\n", j.Product, run, j.P99.N,
		steps.FormatMS(j.P99.Min), steps.FormatMS(j.P99.Median), steps.FormatMS(j.P99.Max), gaps)
}

func (m *md) chartsSection() {
	m.printf("## Charts\n\n")
	r := m.r
	if len(r.Charts) > 0 && m.opt.ChartsDir == "" {
		m.printf("Charts were not written: the report went to standard output (`aggregate report --charts-dir DIR` writes them).\n\n")
	}
	if len(r.Charts) > 0 && m.opt.ChartsDir != "" {
		for _, cf := range r.Charts {
			m.printf("![%s](%s)\n\n", cell(cf.Alt), m.chartLink(cf.Name))
		}
		m.chartKneeNote()
	}
	if len(r.ChartsNA) > 0 {
		m.printf("Not drawn (no data):\n\n")
		for _, why := range r.ChartsNA {
			m.printf("- %s\n", why)
		}
		m.printf("\n")
	}
}

// chartLink is the chart's path relative to the report.
func (m *md) chartLink(name string) string {
	p := filepath.Join(m.opt.ChartsDir, name)
	if m.opt.LinkBase != "" {
		if r, err := relPath(m.opt.LinkBase, p); err == nil {
			p = r
		}
	}
	return strings.ReplaceAll(filepath.ToSlash(p), " ", "%20")
}

func (m *md) database() {
	m.printf("## Database and bottleneck\n\n")
	for _, res := range m.r.Resources {
		m.productDatabase(res)
	}
}

func (m *md) productDatabase(res model.Resources) {
	m.printf("### %s\n\n", res.Product)
	if res.NA != "" && len(res.Steps) == 0 {
		m.printf("N/A: %s.\n\n", res.NA)
		return
	}
	m.printf("Sampler: %d records from %s; IdP process tree: %s.\n\n", res.Records, m.links(res.SampleFiles), orNone(res.IdPSource))
	if !res.HasDB {
		m.printf("PostgreSQL: N/A: no postgres samples for this product (it may use no database, or the sampler was not given one).\n\n")
	}
	m.usageTable(res)
	m.topQueries(res)
}

// usageTable renders one row per steady-state step; without any postgres
// record the database columns are left out (the line above says why).
func (m *md) usageTable(res model.Resources) {
	if res.HasDB {
		m.printf("| Scenario | c | QPS | IdP CPU | PostgreSQL CPU | PostgreSQL MiB | TPS | Connections median / max | Host busy | Driver CPU | Verdict |\n")
		m.printf("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	} else {
		m.printf("| Scenario | c | QPS | IdP CPU | Host busy | Driver CPU | Verdict |\n|---|--:|--:|--:|--:|--:|---|\n")
	}
	for _, u := range res.Steps {
		s := u.File.Step
		db := ""
		if res.HasDB {
			db = fmt.Sprintf(" %s | %s | %s | %s |", fig(u.DBCPU, formatCPU), fig(u.DBRSS, formatMiB), fig(u.TPS, steps.FormatQPS), connsCell(u))
		}
		m.printf("| %s %s | %d | %s | %s |%s %s | %s | %s |\n", u.Scenario.ID, u.Scenario.Name, s.Connections,
			stepRate(s), fig(u.IdPCPU, formatCPU), db, hostCell(u), formatCPU(s.Driver.CPUPct), cell(u.Verdict))
	}
	m.printf("\n")
}

// connsCell renders "median / max", or one N/A when both are.
func connsCell(u model.StepUsage) string {
	if !u.ConnsMedian.OK && !u.ConnsMax.OK {
		return fig(u.ConnsMedian, formatCount)
	}
	return fig(u.ConnsMedian, formatCount) + " / " + fig(u.ConnsMax, formatCount)
}

func hostCell(u model.StepUsage) string {
	if u.Usage.HostFromStep {
		return steps.Percent(u.Usage.HostBusy) + " (step)"
	}
	if u.HostSteal.OK {
		return fig(u.HostBusy, formatCPU) + " (steal " + formatCPU(u.HostSteal.Value) + ")"
	}
	return fig(u.HostBusy, formatCPU)
}

// links renders several files as links, "no sampler file" for none.
func (m *md) links(paths []string) string {
	if len(paths) == 0 {
		return "no sampler file"
	}
	var parts []string
	for _, p := range paths {
		parts = append(parts, m.link(p))
	}
	return strings.Join(parts, ", ")
}

func (m *md) topQueries(res model.Resources) {
	if len(res.TopQueries) == 0 {
		m.printf("Top queries: N/A: %s.\n\n", res.TopNA)
		return
	}
	m.printf("Top %d queries by total execution time over the whole sampler run (pg_stat_statements, every scenario):\n\n", len(res.TopQueries))
	m.printf("| # | Query | Calls | Total ms | Mean ms |\n|--:|---|--:|--:|--:|\n")
	for i, q := range res.TopQueries {
		m.printf("| %d | %s | %s | %s | %s |\n", i+1, queryCell(q.Query), steps.Thousands(q.Calls), steps.FormatMS(q.TotalMS), steps.FormatMS(q.MeanMS))
	}
	m.printf("\n")
}

// QueryChars is how much of a normalised query a table shows.
const QueryChars = 100

// queryCell renders SQL as a code span fit for a table cell: whitespace
// collapsed, cut at QueryChars, pipes escaped (GitHub unescapes \| inside
// code spans in tables), and a delimiter longer than any backtick run in
// the text.
func queryCell(q string) string {
	q = cut(strings.Join(strings.Fields(q), " "), QueryChars)
	q = strings.ReplaceAll(q, "|", `\|`)
	if q == "" {
		return "(empty)"
	}
	fence := "`"
	for strings.Contains(q, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(q, "`") || strings.HasSuffix(q, "`") || len(fence) > 1 {
		pad = " "
	}
	return fence + pad + q + pad + fence
}

func (m *md) howToReadResources() {
	m.printf("- **Memory** is PSS where the sampler could read it, else RSS (the table says which), in MiB\n")
	m.printf("  (2^20 bytes): the median of the sampler's records whose time falls\n")
	m.printf("  inside the measured windows of the product's steady-state steps (one step per scenario, not\n")
	m.printf("  the whole ladder). IdP = the product's process tree (the `process:<product>` source, else the\n")
	m.printf("  largest process tree sampled); PostgreSQL = the server's tree (postmaster and every backend);\n")
	m.printf("  full stack = the median of IdP + PostgreSQL taken at the same sampling instant.\n")
	m.printf("- **Database and bottleneck**: per steady-state step, medians of the sampler's records inside\n")
	m.printf("  its measured window. CPU is percent of one core (100%% = one core busy); host busy is percent\n")
	m.printf("  of all cores (from the step's own driver.host_cpu_pct, marked \"(step)\", without host samples);\n")
	m.printf("  \"(steal N%%)\" is the share of all cores the hypervisor gave to other guests while this machine\n")
	m.printf("  wanted them (/proc/stat steal): a noisy neighbour, counted in host busy, in no one's CPU;\n")
	m.printf("  TPS = PostgreSQL commits + rollbacks per second; connections = client backends. Driver CPU is\n")
	m.printf("  the step's driver.cpu_pct. The verdict takes the first of these rules that holds:\n")
	for i, rule := range model.VerdictRules() {
		m.printf("  %d. %s\n", i+1, rule)
	}
	m.printf("- **Cold start**: mode %s starts on a fresh database (initialisation and migrations included),\n", model.ColdstartFresh)
	m.printf("  mode %s restarts on an initialised one; seconds from starting the command to the first ready\n", model.ColdstartRestart)
	m.printf("  response, and the process tree's peak RSS until then. A record whose status is not complete\n")
	m.printf("  has no time (N/A with its error).\n")
	m.printf("- **GC jitter**: one long step at fixed connections; P99 per interval. Min / median / max are over\n")
	m.printf("  the intervals that have requests. The intervals must be contiguous: a missing stretch or an\n")
	m.printf("  interval without requests is flagged in bold and breaks the line in the chart.\n")
	m.printf("- **Charts** plot complete ladder steps (x: connections on a log2 scale); an open marker is a\n")
	m.printf("  driver-limited step, a lower bound.\n\n")
}
