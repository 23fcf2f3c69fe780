package model

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
	"github.com/idpbench/idpbench/internal/steps"
)

// Options configure Build.
type Options struct {
	Title       string // report title; "" = DefaultTitle
	ToolVersion string // aggregate's own version, shown in the header
	// ServerMetrics is what each product exposes of its own metrics, for
	// the steps that recorded no selector (the registry's
	// products.ServerMetrics); nil: nothing is known of any product.
	ServerMetrics servermetrics.Known
	// References are the reference products (the registry's
	// products.References): this machine's protocol ceiling, shown apart
	// from the products of the comparison on the first screen.
	References []string
}

// DefaultTitle is the report title when Options.Title is empty.
const DefaultTitle = "idpbench: OpenID Connect IdP comparison"

// NoResults is the N/A reason of a cell nothing explains.
const NoResults = "no results"

// CoreScenarios returns the scenarios that always get a row, with or without results.
func CoreScenarios() []string {
	return []string{
		schema.ScenarioDiscovery, schema.ScenarioClientCredentials, schema.ScenarioIntrospect,
		schema.ScenarioRefresh, schema.ScenarioUserinfo,
	}
}

// Report is everything a comparison shows, computed before any rendering.
type Report struct {
	Title            string
	AggregateVersion string
	LoadstepVersions []string      // distinct tool_version of the steps
	Start, End       time.Time     // earliest measured-window start, latest end (zero without steps)
	Hosts            []schema.Host // distinct hosts the steps ran on
	Products         []Product     // sorted by name
	Scenarios        []schema.ScenarioInfo
	Cells            []Cell     // one per scenario x product, scenario-major in Scenarios/Products order
	Limited          []StepFile // driver-limited steps, ladder and others
	NA               []Cell     // cells without a steady state, in Cells order
	Other            []StepFile // steps outside the ladder (phase=gcjitter ...)
	Coldstarts       []ColdstartFile
	Samples          []SampleFile
	Inputs           InputCounts
	Resources        []Resources    // per product, in Products order
	Cold             []ColdstartRow // per product, in Products order
	Jitter           []Jitter       // per product, in Products order
	Unattributed     []string       // sampler files no product could be found for
	Charts           []ChartFile
	ChartsNA         []string   // charts not drawn and why
	Time             *TimeUse   // where the run's wall time went; nil without phase records
	Knees            []KneeFile // where round 1 of each ladder stopped (ladders.go)
	// Searches is each cell's search for the highest sustained share below
	// one not sustained (shares.go).
	Searches []SearchFile
	// Server is the server side of each cell with a steady window
	// (serverside.go), in Cells order.
	Server []ServerSide
	// HostRefUS is the run's reference host probe (µs): the median over
	// every ladder window with a probe; the adjusted capacities are at it.
	HostRefUS float64
	// Slopes is each product's HostSlope, in Products order.
	Slopes []HostSlope
	// Ratios is each scenario's capacity ratios between products (ratios.go).
	Ratios []Ratio
	// AA is each cell's A/A check: the product against itself (ratios.go),
	// for runs without twins.
	AA []AA
	// Pairs is each scenario's pairs of products compared round by round
	// in the interleaved rounds (paired.go); none in runs without them.
	Pairs []Pair
	// Twins is each A/A pair: a product against its twin, the second
	// window of the same cell in the same rounds (paired.go).
	Twins []Pair
	// References are Options.References; Verdicts the first screen's rows
	// (verdicts.go), none without Pairs.
	References []string
	Verdicts   []VerdictRow
}

// ColdstartRow is one product's cold starts.
type ColdstartRow struct {
	Product string
	A, B    Coldstart
}

// InputCounts says how many records the report was built from.
type InputCounts struct {
	Steps, Metas, Coldstarts, SampleFiles int
}

// Product is one product of the comparison.
type Product struct {
	Name     string
	Version  string       // from the meta file, else the distinct versions its steps name
	Meta     *schema.Meta // nil without a meta file
	MetaPath string
	NA       bool // the meta file says the product could not run
}

// Cell is one scenario of one product: its ladder and steady state.
type Cell struct {
	Scenario schema.ScenarioInfo
	Product  string
	Ladder   []LadderStep // by connections, then start
	Levels   []Level      // the ladder's levels, by connections, then rate
	// Warmup is what the ladder's steps spent warming up (seconds), JIT
	// the JIT compiler's busy share of a core in their windows (percent;
	// N 0 where none was read): the warmups' figures.
	Warmup, JIT steps.Spread
	// SteadyLevel is the index into Levels of the steady state
	// (SelectSteadyLevel); -1 when N/A.
	SteadyLevel int
	// Steady is the index into Ladder of the steady level's median window:
	// the window whose qps is the level's median (the lower middle for an
	// even count), whose figures stand for the level where one step must;
	// -1 when N/A.
	Steady   int
	NAReason string // why there is no steady state
	// Capacity is the cell's throughput from every level of the plateau
	// (capacity.go); zero when N/A.
	Capacity Capacity
	// Shares is the cell's latency at shares of its capacity, by share
	// (shares.go); none without windows at shares.
	Shares []ShareLatency
	// Search is how the run looked for the highest share the product
	// sustained below the lowest it did not; nil when there was none.
	Search *schema.Search
}

// SteadyStep returns the steady level's median window, nil when the cell is N/A.
func (c Cell) SteadyStep() *LadderStep {
	if c.Steady < 0 {
		return nil
	}
	return &c.Ladder[c.Steady]
}

// SteadyWindows returns the steady level, nil when the cell is N/A.
func (c Cell) SteadyWindows() *Level {
	if c.SteadyLevel < 0 {
		return nil
	}
	return &c.Levels[c.SteadyLevel]
}

// StealFlagPct is the host steal (schema.Driver.HostStealPct) above which a
// window is flagged: the hypervisor gave that share of the cores to other
// guests during it, so it ran on a slower machine than its neighbours.
const StealFlagPct = 5.0

// StealFlag is the flag of such a window (one text, so a level counts them).
var StealFlag = fmt.Sprintf("host steal over %g%%", StealFlagPct)

// UnstablePct is the qps spread (Spread.Pct) above which a level of several
// windows is flagged unstable: its windows disagree too much for one figure.
const UnstablePct = 10.0

// Level is one ladder step measured in one or more windows (--repeats N):
// the steps of a cell at one connection count and rate, and each metric's
// spread over them.
type Level struct {
	Connections int
	RateRPS     float64 // 0 = closed loop
	Steps       []int   // indexes into Cell.Ladder, in time order
	// Per window: qps, the latency percentiles (ms) and the error rate (a fraction).
	QPS, P50MS, P95MS, P99MS, ErrorRate Spread
	// HostProbe is the windows' host probe (each window's median of the
	// sampler's host records' probe_us inside it, µs; lower = faster), over
	// the windows that have one: how much the host's own speed moved
	// between them. N is 0 where none has.
	HostProbe Spread
	// Probes is each window's host probe (µs), in Steps order; 0 where
	// the window has none.
	Probes []float64
	// EqualHostQPS is the windows' qps at one host speed: each window's qps
	// times its probe over the level's median probe (a window on cores 10%
	// slower counts 10% more), when every window has a probe; N is 0
	// otherwise. Throughput follows the probe about one to one on a shared
	// machine (results/reference/REPRODUCE.md), so this spread is what is
	// left when the machine's own speed is taken out: the product's.
	EqualHostQPS Spread
	// Sessions is how many sessions of the runs its windows were measured
	// in (phases.jsonl); 0 without phase records. Above 1 the product was
	// started again between its windows (a resumed run): a JVM paid its
	// JIT warmup again.
	Sessions int
	Flags    []string // "steady state", "unstable ...", "windows from N sessions ...", the windows' flags
}

// Windows is the number of measured windows of the level.
func (l Level) Windows() int { return len(l.Steps) }

// Unstable reports whether the level has several windows whose qps spread
// exceeds UnstablePct.
func (l Level) Unstable() bool {
	return l.QPS.N >= 2 && l.QPS.Pct() > UnstablePct
}

// Iterations reports whether the cell counts iterations of several named
// requests (schema.Step.CountUnit) rather than single requests.
func (c Cell) Iterations() bool {
	for _, ls := range c.Ladder {
		if ls.Step.CountUnit == schema.CountIterations {
			return true
		}
	}
	return schema.IterationScenario(c.Scenario.Name)
}

// LadderStep is one step of a ladder with the flags a reader needs.
type LadderStep struct {
	StepFile
	Flags []string // "driver-limited", "interrupted" ... (the level's flags say "steady state")
}

// Build computes the report model from loaded inputs.
func Build(in *Inputs, opt Options) *Report {
	r := &Report{
		Title:            cmp.Or(opt.Title, DefaultTitle),
		AggregateVersion: opt.ToolVersion,
		Coldstarts:       in.Coldstarts,
		Samples:          in.Samples,
		Knees:            in.Knees,
		Searches:         in.Searches,
		References:       opt.References,
		Inputs:           InputCounts{len(in.Steps), len(in.Metas), len(in.Coldstarts), len(in.Samples)},
	}
	ladders := map[cellKey][]StepFile{}
	for _, sf := range in.Steps {
		if sf.Step.Driver.Limited {
			r.Limited = append(r.Limited, sf)
		}
		if !IsLadder(sf.Step) {
			r.Other = append(r.Other, sf)
			continue
		}
		k := cellKey{sf.Product(), sf.Step.Scenario}
		ladders[k] = append(ladders[k], sf)
	}
	r.header(in.Steps)
	r.Products = products(in, ladders)
	r.Scenarios = scenarios(r.Products, ladders)
	r.cells(ladders, newSessionIndex(in.Phases))
	r.hostModel()
	r.shares()
	r.ratios()
	r.aaChecks()
	r.pairs()
	if len(r.Pairs) > 0 {
		r.verdicts()
	}
	r.perProduct()
	r.serverSide(servermetrics.ParseFile, opt.ServerMetrics)
	r.charts()
	r.Time = buildTimeUse(in.Phases, in.Steps)
	return r
}

// perProduct computes the resources, cold start and GC-jitter figures of
// every product.
func (r *Report) perProduct() {
	known := map[string]bool{}
	for _, p := range r.Products {
		known[p.Name] = true
	}
	for _, p := range r.Products {
		r.Resources = append(r.Resources, buildResources(p, r.Cells, r.Samples, known))
		r.Cold = append(r.Cold, ColdstartRow{Product: p.Name,
			A: coldstartFor(r.Coldstarts, p.Name, ColdstartFresh), B: coldstartFor(r.Coldstarts, p.Name, ColdstartRestart)})
		r.Jitter = append(r.Jitter, jitterFor(r.Other, p.Name))
	}
	for _, sf := range r.Samples {
		if sampleProduct(sf, known) == "" && !hostOnly(sf) {
			r.Unattributed = append(r.Unattributed, sf.Path)
		}
	}
}

// hostOnly: every record of sf is a host record, as the run's host sampler
// writes (RUN_DIR/host-samples-*.jsonl): no product's, and none missing
// one; its probe feeds every window's host speed (newProbeIndex).
func hostOnly(sf SampleFile) bool {
	for _, s := range sf.Samples {
		if s.Source != SourceHost {
			return false
		}
	}
	return len(sf.Samples) > 0
}

type cellKey struct{ product, scenario string }

func IsLadder(s *schema.Step) bool {
	p := s.Labels["phase"]
	return p == "" || p == steps.PhaseLadder
}

func metaProduct(mf MetaFile) string {
	return cmp.Or(mf.Meta.Product, steps.DirProduct(mf.Path))
}

func (r *Report) header(recs []StepFile) {
	versions := map[string]bool{}
	hosts := map[schema.Host]bool{}
	for _, sf := range recs {
		s := sf.Step
		if r.Start.IsZero() || s.Start.Before(r.Start) {
			r.Start = s.Start
		}
		if s.End.After(r.End) {
			r.End = s.End
		}
		if s.ToolVersion != "" {
			versions[s.ToolVersion] = true
		}
		h := s.Host
		h.Hostname = "" // the report names no machine
		if !hosts[h] {
			hosts[h] = true
			r.Hosts = append(r.Hosts, h)
		}
	}
	r.LoadstepVersions = slices.Sorted(maps.Keys(versions))
}

// products lists every product with a meta file, steps or a cold start,
// sorted by name.
// The first meta file of a product wins.
func products(in *Inputs, ladders map[cellKey][]StepFile) []Product {
	byName := map[string]*Product{}
	get := func(name string) *Product {
		if byName[name] == nil {
			byName[name] = &Product{Name: name}
		}
		return byName[name]
	}
	for _, mf := range in.Metas {
		p := get(metaProduct(mf))
		if p.Meta == nil {
			p.Meta, p.MetaPath, p.Version = mf.Meta, mf.Path, mf.Meta.ProductVersion
			p.NA = mf.Meta.Status == schema.MetaNA
		}
	}
	for _, cf := range in.Coldstarts {
		get(cmp.Or(cf.Coldstart.Product, steps.DirProduct(cf.Path)))
	}
	stepVersions := map[string]map[string]bool{}
	for _, sf := range in.Steps {
		name := sf.Product()
		get(name)
		if stepVersions[name] == nil {
			stepVersions[name] = map[string]bool{}
		}
		if v := sf.Step.ProductVersion; v != "" {
			stepVersions[name][v] = true
		}
	}
	var out []Product
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		p := byName[name]
		if p.Version == "" {
			p.Version = strings.Join(slices.Sorted(maps.Keys(stepVersions[name])), ", ")
		}
		out = append(out, *p)
	}
	return out
}

// scenarios returns the core set plus every scenario any product has ladder
// results or an N/A reason for, in schema.Scenarios order; names schema does
// not know follow, sorted.
func scenarios(ps []Product, ladders map[cellKey][]StepFile) []schema.ScenarioInfo {
	seen := map[string]bool{}
	for _, s := range CoreScenarios() {
		seen[s] = true
	}
	for k := range ladders {
		seen[k.scenario] = true
	}
	for _, p := range ps {
		if p.Meta != nil {
			for s := range p.Meta.ScenarioNA {
				seen[s] = true
			}
		}
	}
	var out []schema.ScenarioInfo
	for _, info := range schema.Scenarios {
		if seen[info.Name] {
			out = append(out, info)
			delete(seen, info.Name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, schema.ScenarioInfo{ID: "X", Name: name, Title: "custom scenario"})
	}
	return out
}

func (r *Report) cells(ladders map[cellKey][]StepFile, sessions sessionIndex) {
	probes := newProbeIndex(r.Samples)
	for _, sc := range r.Scenarios {
		for _, p := range r.Products {
			c := buildCell(sc, p, ladders[cellKey{p.Name, sc.Name}], probes, sessions)
			r.Cells = append(r.Cells, c)
			if c.Steady < 0 {
				r.NA = append(r.NA, c)
			}
		}
	}
}

func buildCell(sc schema.ScenarioInfo, p Product, files []StepFile, probes probeIndex, sessions sessionIndex) Cell {
	files = slices.Clone(files)
	slices.SortStableFunc(files, func(a, b StepFile) int {
		return cmp.Or(cmp.Compare(a.Step.Connections, b.Step.Connections), a.Step.Start.Compare(b.Step.Start))
	})
	recs := make([]*schema.Step, len(files))
	for i, f := range files {
		recs[i] = f.Step
	}
	c := Cell{Scenario: sc, Product: p.Name, Levels: levels(recs, probes, sessions), Steady: -1}
	plateau, why := steps.Plateau(levelSteps(c.Levels, recs), schema.ScenarioCheck(sc.Name))
	c.SteadyLevel, c.NAReason = -1, why
	if len(plateau) > 0 {
		c.SteadyLevel = plateau[0]
		c.Steady = medianWindow(c.Levels[c.SteadyLevel], recs)
		c.Capacity = capacityOf(plateau, c.Levels, recs)
	}
	if len(files) == 0 {
		c.NAReason = naReason(p, sc.Name)
	}
	for i, f := range files {
		c.Ladder = append(c.Ladder, LadderStep{StepFile: f, Flags: stepFlags(recs[i])})
	}
	c.Warmup, c.JIT = warmupSpreads(recs)
	for i := range c.Levels {
		c.Levels[i].Flags = levelFlags(c.Levels[i], c.Ladder, i == c.SteadyLevel)
	}
	return c
}

// warmupSpreads are what the steps spent warming up (seconds) and the JIT
// compiler's busy share of a core in their windows (percent, where read).
func warmupSpreads(recs []*schema.Step) (warmup, jit steps.Spread) {
	var spent, pct []float64
	for _, s := range recs {
		spent = append(spent, s.WarmupS)
		if s.JIT != nil && s.JIT.WindowPct != nil {
			pct = append(pct, *s.JIT.WindowPct)
		}
	}
	return steps.SpreadOf(spent), steps.SpreadOf(pct)
}

// levels groups a ladder's steps (by connections, then start) into levels
// by connections and rate, each with its windows' spread.
func levels(recs []*schema.Step, probes probeIndex, sessions sessionIndex) []Level {
	var out []Level
	for i, s := range recs {
		j := slices.IndexFunc(out, func(l Level) bool { return l.Connections == s.Connections && l.RateRPS == s.RateRPS })
		if j < 0 {
			out = append(out, Level{Connections: s.Connections, RateRPS: s.RateRPS})
			j = len(out) - 1
		}
		out[j].Steps = append(out[j].Steps, i)
	}
	slices.SortStableFunc(out, func(a, b Level) int {
		return cmp.Or(cmp.Compare(a.Connections, b.Connections), cmp.Compare(a.RateRPS, b.RateRPS))
	})
	for i := range out {
		out[i].spreads(recs, probes)
		var starts []time.Time
		for _, j := range out[i].Steps {
			starts = append(starts, recs[j].Start)
		}
		out[i].Sessions = sessions.count(starts)
	}
	return out
}

// spreads summarises every metric over the level's windows.
func (l *Level) spreads(recs []*schema.Step, probes probeIndex) {
	var qps, p50, p95, p99, errs, probe []float64
	for _, i := range l.Steps {
		s := recs[i]
		qps, errs = append(qps, s.QPS), append(errs, s.ErrorRate)
		p50, p95, p99 = append(p50, s.LatencyMS.P50), append(p95, s.LatencyMS.P95), append(p99, s.LatencyMS.P99)
		us, ok := probes.window(s.Start, s.End)
		if ok {
			probe = append(probe, us)
		}
		l.Probes = append(l.Probes, us)
	}
	l.QPS, l.P50MS, l.P95MS, l.P99MS, l.ErrorRate = steps.SpreadOf(qps), steps.SpreadOf(p50), steps.SpreadOf(p95), steps.SpreadOf(p99), steps.SpreadOf(errs)
	l.HostProbe = steps.SpreadOf(probe)
	if len(probe) == len(qps) && l.HostProbe.Median > 0 {
		adj := make([]float64, len(qps))
		for i := range qps {
			adj[i] = qps[i] * probe[i] / l.HostProbe.Median
		}
		l.EqualHostQPS = steps.SpreadOf(adj)
	}
}

// levelSteps returns each level's windows.
func levelSteps(ls []Level, recs []*schema.Step) [][]*schema.Step {
	out := make([][]*schema.Step, len(ls))
	for i, l := range ls {
		for _, j := range l.Steps {
			out[i] = append(out[i], recs[j])
		}
	}
	return out
}

// medianWindow returns the index into steps of the level's window whose qps
// is the median: the lower middle for an even count, the earlier window on
// a tie.
func medianWindow(l Level, recs []*schema.Step) int {
	idx := slices.Clone(l.Steps)
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(recs[a].QPS, recs[b].QPS) })
	return idx[(len(idx)-1)/2]
}

// levelFlags says what a reader must know about a level: steady state,
// unstable, then every flag of its windows, with how many windows have it
// when not all do.
func levelFlags(l Level, ladder []LadderStep, steady bool) []string {
	var f []string
	if steady {
		f = append(f, "steady state")
	}
	if l.Unstable() {
		f = append(f, fmt.Sprintf("unstable: qps spread %.1f%% > %g%%", l.QPS.Pct(), UnstablePct)+l.hostProbeNote())
	}
	if l.Sessions > 1 {
		f = append(f, fmt.Sprintf("windows from %d sessions: the product was started again between them (a resumed run)", l.Sessions))
	}
	count := map[string]int{}
	var order []string
	for _, i := range l.Steps {
		for _, flag := range ladder[i].Flags {
			if count[flag] == 0 {
				order = append(order, flag)
			}
			count[flag]++
		}
	}
	for _, flag := range order {
		if count[flag] < len(l.Steps) {
			flag += fmt.Sprintf(" (%d of %d windows)", count[flag], len(l.Steps))
		}
		f = append(f, flag)
	}
	return f
}

// hostProbeNote says, for an unstable level, how much the host's own speed
// moved between its windows (the host probe's spread) and what spread is
// left at one host speed, so a reader can tell a slower machine from a
// product that varied: " (host probe spread 8.3%; at one host speed 2.1%)",
// " (host probe spread 8.3% over 2 of 3 windows)" when not every window
// has one. Empty when fewer than 2 windows have the probe.
func (l Level) hostProbeNote() string {
	switch {
	case l.HostProbe.N < 2:
		return ""
	case l.HostProbe.N < l.Windows():
		return fmt.Sprintf(" (host probe spread %.1f%% over %d of %d windows)", l.HostProbe.Pct(), l.HostProbe.N, l.Windows())
	}
	return fmt.Sprintf(" (host probe spread %.1f%%; at one host speed %.1f%%)", l.HostProbe.Pct(), l.EqualHostQPS.Pct())
}

// naReason explains a cell without results: the meta's reason for the
// scenario, else the product's, else NoResults.
func naReason(p Product, scenario string) string {
	if p.Meta == nil {
		return NoResults
	}
	if why := p.Meta.ScenarioNA[scenario]; why != "" {
		return why
	}
	if p.NA {
		return cmp.Or(p.Meta.NAReason, "product N/A (no reason given)")
	}
	return NoResults
}

// stepFlags says what a reader must know about a window of a ladder.
func stepFlags(s *schema.Step) []string {
	var f []string
	switch rule := schema.ScenarioCheck(s.Scenario); {
	case rule == "" || s.Check == rule:
	case s.Check == "":
		f = append(f, "no success rule recorded (an older loadstep)")
	default:
		f = append(f, fmt.Sprintf("judged by %q, not the scenario's rule", s.Check))
	}
	if s.Driver.Limited {
		f = append(f, "driver-limited")
	}
	if s.Requests == 0 && s.Status == schema.StatusComplete {
		f = append(f, "no request completed in the window")
	}
	if st := s.Driver.HostStealPct; st != nil && *st > StealFlagPct {
		f = append(f, StealFlag)
	}
	switch s.Status {
	case schema.StatusComplete:
	case schema.StatusError:
		f = append(f, "error: "+cmp.Or(s.Error, "no reason given"))
	default:
		f = append(f, s.Status)
	}
	if !steps.BelowErrors(s) {
		f = append(f, "errors above "+steps.FormatPct(schema.SteadyMaxErrorRate))
	}
	if !steps.Reachable(s) {
		f = append(f, fmt.Sprintf("unreachable %.1f s (%d failed connection attempts)", s.UnreachableS, s.ConnectErrors.Total()))
	}
	if s.Errors.PoolExhausted > 0 {
		f = append(f, fmt.Sprintf("pool exhausted (%d)", s.Errors.PoolExhausted))
	}
	if s.RateRPS > 0 {
		f = append(f, "rate "+steps.FormatQPS(s.RateRPS)+" req/s")
	}
	return f
}
