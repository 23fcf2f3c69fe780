package model

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/stats"
	"github.com/idpbench/idpbench/internal/steps"
)

// Sampler sources the report reads (schema.Sample.Source).
const (
	SourcePostgres = "postgres"
	// NoDatabase is the database source of a product whose meta records
	// no database (it keeps its state in memory: the reference OP).
	NoDatabase          = "none"
	SourceHost          = "host"
	SourceProcessPrefix = "process:"
	// SourceContainerPrefix is a container's cgroup (sampler --docker), as
	// in compose mode: idpbench-<product> and idpbench-<product>-postgres.
	SourceContainerPrefix = "container:"
)

// TopQueryCount is how many statements a product's database section lists.
const TopQueryCount = 3

// BytesPerMiB is bytes per MiB.
const BytesPerMiB = 1 << 20

// Figure is a computed value or why there is none.
type Figure struct {
	Value float64
	OK    bool
	NA    string // reason when !OK
}

func figure(v float64, ok bool, na string) Figure {
	if !ok {
		return Figure{NA: na}
	}
	return Figure{Value: v, OK: true}
}

// Resources is one product's memory, CPU and database figures, computed
// from its sampler records inside the measured windows of its steady-state
// steps.
type Resources struct {
	Product     string
	NA          string   // why there are no figures at all ("" = some)
	SampleFiles []string // sampler files attributed to the product
	Records     int      // sampler records of the product
	IdPSource   string   // the source taken as the IdP: "process:<name>", or "container:<name>" in compose mode
	DBSource    string   // the source of PostgreSQL's CPU and memory: "postgres", or its container
	HasDB       bool     // the product's sampler files hold postgres records
	Windows     int      // steady-state windows
	InWindows   int      // sampler records inside them, all sources
	IdPRSS      Figure   // MiB, median (PSS or RSS: IdPMem)
	DBRSS       Figure   // MiB, median (PSS or RSS: DBMem)
	StackRSS    Figure   // MiB, median of IdP + PostgreSQL at the same sampling instant
	IdPMem      string   // MemPSS, MemRSS or MemCgroup: what IdPRSS measures
	DBMem       string   // MemPSS, MemRSS or MemCgroup: what DBRSS measures
	ConnsMax    Figure   // PostgreSQL client connections, max over the windows
	Steps       []StepUsage
	TopQueries  []schema.Query // TopQueryCount statements by total time
	TopNA       string         // why there are none
	// Efficiency of the product's cells by scenario name (cells without a
	// steady state have N/A figures).
	Efficiency map[string]Efficiency
	Run        RunUsage // CPU and memory over every measured window of the run
}

// StepUsage is what one steady state cost: medians of the sampler's
// records inside the measured windows of its level, and the bottleneck
// verdict. File is the level's median window.
type StepUsage struct {
	Scenario    schema.ScenarioInfo
	File        StepFile
	Records     int    // sampler records inside the windows, all sources
	IdPCPU      Figure // percent of one core
	DBCPU       Figure // percent of one core
	DBRSS       Figure // MiB
	TPS         Figure // PostgreSQL transactions per second
	ConnsMedian Figure
	ConnsMax    Figure
	HostBusy    Figure // percent of all cores
	HostSteal   Figure // percent of all cores the hypervisor gave to other guests (steal), median
	Usage       Usage
	VerdictKind string
	Verdict     string
}

// productSamples collects the records of every sampler file attributed to
// product, ordered by time.
func productSamples(files []SampleFile, product string, known map[string]bool) ([]SampleFile, []schema.Sample) {
	var mine []SampleFile
	var all []schema.Sample
	for _, sf := range files {
		if sampleProduct(sf, known) == product {
			mine = append(mine, sf)
			all = append(all, sf.Samples...)
		}
	}
	slices.SortStableFunc(all, func(a, b schema.Sample) int { return a.T.Compare(b.T) })
	return mine, all
}

// sampleProduct attributes a sampler file to a product: the directory it
// lies in (results/<run>/<product>/samples*.jsonl), else the first
// process:<name> source naming a known product, else "".
func sampleProduct(sf SampleFile, known map[string]bool) string {
	if p := steps.DirProduct(sf.Path); known[p] {
		return p
	}
	for _, s := range sf.Samples {
		if name, ok := strings.CutPrefix(s.Source, SourceProcessPrefix); ok && known[name] {
			return name
		}
	}
	return ""
}

// IdPSource picks the source that is the product's process tree:
// "process:<product>" when present, else the process source with the
// largest median RSS (a tree holds its subtrees, so the largest is the
// root). Without process sources (compose mode) it is the product's
// container, "container:idpbench-<product>", else the largest container
// that is not a database's. "" when there is none of these.
func IdPSource(product string, samples []schema.Sample) string {
	if src := largest(samples, SourceProcessPrefix+product, func(src string) bool {
		return strings.HasPrefix(src, SourceProcessPrefix)
	}); src != "" {
		return src
	}
	return largest(samples, SourceContainerPrefix+"idpbench-"+product, func(src string) bool {
		return strings.HasPrefix(src, SourceContainerPrefix) && !isDBContainer(src)
	})
}

// isDBContainer: the compose files name their database idpbench-<product>-postgres.
func isDBContainer(src string) bool { return strings.HasSuffix(src, "-postgres") }

// DBSource picks the source of PostgreSQL's CPU and memory: "postgres" when
// its records carry process figures (native mode), else the database's
// container (compose mode: the sampler sees the server only through its
// cgroup), else "postgres", whose N/A reasons explain what is missing.
func DBSource(samples []schema.Sample) string {
	if len(values(samples, SourcePostgres, hasRSS, cpuPct)) > 0 {
		return SourcePostgres
	}
	if src := largest(samples, "", func(src string) bool {
		return strings.HasPrefix(src, SourceContainerPrefix) && isDBContainer(src)
	}); src != "" {
		return src
	}
	return SourcePostgres
}

// largest returns want when a record of that source exists, else among the
// sources that match, the one with the largest median RSS; "" when none.
func largest(samples []schema.Sample, want string, match func(string) bool) string {
	rss := map[string][]float64{}
	for _, s := range samples {
		if (want != "" && s.Source == want) || match(s.Source) {
			rss[s.Source] = append(rss[s.Source], float64(s.RSSBytes))
		}
	}
	if _, ok := rss[want]; ok {
		return want
	}
	best, bestRSS := "", -1.0
	for _, src := range slices.Sorted(maps.Keys(rss)) {
		if m, _ := stats.Median(rss[src]); m > bestRSS {
			best, bestRSS = src, m
		}
	}
	return best
}

// values returns get(s) for every sample of source src that keep accepts.
func values(samples []schema.Sample, src string, keep func(schema.Sample) bool, get func(schema.Sample) float64) []float64 {
	var out []float64
	for _, s := range samples {
		if s.Source == src && (keep == nil || keep(s)) {
			out = append(out, get(s))
		}
	}
	return out
}

// hasRSS keeps records with process figures: a postgres record whose
// server processes were not visible carries only the database statistics.
func hasRSS(s schema.Sample) bool { return s.RSSBytes > 0 }

func rssMiB(s schema.Sample) float64 { return float64(s.RSSBytes) / BytesPerMiB }

func cpuPct(s schema.Sample) float64 { return s.CPUPct }

func hasSteal(s schema.Sample) bool { return s.StealPct != nil }

func stealPct(s schema.Sample) float64 { return *s.StealPct }

// medianFigure is the median of vs, or N/A with na.
func medianFigure(vs []float64, na string) Figure {
	m, ok := stats.Median(vs)
	return figure(m, ok, na)
}

func maxFigure(vs []float64, na string) Figure {
	if len(vs) == 0 {
		return Figure{NA: na}
	}
	return Figure{Value: slices.Max(vs), OK: true}
}

// stackRSS sums the IdP's and PostgreSQL's memory taken at the same sampling
// instant (the sampler stamps every source of a tick with one time), each
// source read as memOf says, and returns those sums in MiB.
func stackRSS(samples []schema.Sample, idp, db string) []float64 {
	idpKeep, idpGet, _ := memOf(samples, idp)
	dbKeep, dbGet, _ := memOf(samples, db)
	idpAt, dbAt := map[time.Time]float64{}, map[time.Time]float64{}
	for _, s := range samples {
		switch {
		case s.Source == idp && idpKeep(s):
			idpAt[s.T] += idpGet(s)
		case s.Source == db && dbKeep(s):
			dbAt[s.T] += dbGet(s)
		}
	}
	var sums []float64
	for _, t := range slices.SortedFunc(maps.Keys(idpAt), time.Time.Compare) {
		if db, ok := dbAt[t]; ok {
			sums = append(sums, idpAt[t]+db)
		}
	}
	return sums
}

// buildResources computes one product's figures.
func buildResources(p Product, cells []Cell, files []SampleFile, known map[string]bool) Resources {
	res := Resources{Product: p.Name}
	mine, samples := productSamples(files, p.Name, known)
	for _, sf := range mine {
		res.SampleFiles = append(res.SampleFiles, sf.Path)
	}
	res.Records = len(samples)
	res.HasDB = hasSource(samples, SourcePostgres)
	res.IdPSource = IdPSource(p.Name, samples)
	res.DBSource = DBSource(samples)
	if p.Meta != nil && p.Meta.Status == schema.MetaOK && len(p.Meta.Database) == 0 && !res.HasDB {
		res.DBSource = NoDatabase
	}
	res.TopQueries, res.TopNA = topQueries(mine)
	var steady []Window
	for _, c := range cells {
		if st := c.SteadyStep(); st != nil && c.Product == p.Name {
			ws := steadyWindows(c)
			steady = append(steady, ws...)
			res.Steps = append(res.Steps, stepUsage(c.Scenario, st.StepFile, ws, samples, res.IdPSource, res.DBSource))
		}
	}
	res.Windows = len(steady)
	res.Efficiency = map[string]Efficiency{}
	for _, c := range cells {
		if c.Product == p.Name {
			res.Efficiency[c.Scenario.Name] = cellEfficiency(c, samples, res.IdPSource, res.DBSource)
		}
	}
	res.Run = runUsage(ladderWindows(cells, p.Name), samples, res.IdPSource, res.DBSource)
	switch {
	case p.NA:
		res.NA = "the product did not run"
	case len(samples) == 0:
		res.NA = "no sampler records"
	case len(steady) == 0:
		res.NA = "no steady-state step"
	}
	if p.NA {
		res.Run = res.Run.na(res.NA)
	}
	if res.NA != "" {
		res.IdPRSS, res.DBRSS, res.StackRSS, res.ConnsMax = Figure{NA: res.NA}, Figure{NA: res.NA}, Figure{NA: res.NA}, Figure{NA: res.NA}
		return res
	}
	in := steps.SamplesIn(samples, steady)
	res.InWindows = len(in)
	res.memory(in, samples)
	return res
}

// What a memory figure measures.
const (
	MemPSS = "PSS" // proportional set size: shared pages divided among the processes mapping them
	MemRSS = "RSS" // resident set size summed over processes: shared pages counted once per process
	// MemCgroup is a container's memory as its cgroup counts it (compose mode).
	MemCgroup = "cgroup"
)

// memOf says how a source's memory is read from samples: PSS when any of its
// records carries one, else RSS. RSS summed over a process tree counts
// shared memory once per process (every PostgreSQL backend maps
// shared_buffers), so PSS is the honest figure where the sampler could read it.
func memOf(samples []schema.Sample, src string) (keep func(schema.Sample) bool, get func(schema.Sample) float64, kind string) {
	if strings.HasPrefix(src, SourceContainerPrefix) {
		return hasRSS, rssMiB, MemCgroup
	}
	if len(values(samples, src, hasPSS, pssMiB)) > 0 {
		return hasPSS, pssMiB, MemPSS
	}
	return hasRSS, rssMiB, MemRSS
}

func hasPSS(s schema.Sample) bool { return s.PSSBytes > 0 }

func pssMiB(s schema.Sample) float64 { return float64(s.PSSBytes) / BytesPerMiB }

// memory fills the memory figures from the records inside the windows.
func (res *Resources) memory(in, all []schema.Sample) {
	res.DBSource = cmp.Or(res.DBSource, SourcePostgres)
	keep, get, kind := memOf(in, res.IdPSource)
	res.IdPRSS, res.IdPMem = medianFigure(values(in, res.IdPSource, keep, get), idpNA(res.IdPSource)), kind
	keep, get, kind = memOf(in, res.DBSource)
	res.DBRSS, res.DBMem = medianFigure(values(in, res.DBSource, keep, get), dbNA(all, res.DBSource)), kind
	res.ConnsMax = maxFigure(values(in, SourcePostgres, nil, conns), dbStatsNA(all, res.DBSource))
	sums := stackRSS(in, res.IdPSource, res.DBSource)
	switch {
	case !res.IdPRSS.OK:
		res.StackRSS = Figure{NA: res.IdPRSS.NA}
	case !res.DBRSS.OK:
		res.StackRSS = Figure{NA: res.DBRSS.NA}
	default:
		res.StackRSS = medianFigure(sums, "no IdP and PostgreSQL records from the same sampling instant")
	}
}

func conns(s schema.Sample) float64 { return float64(s.Connections) }

func xact(s schema.Sample) float64 { return s.XactPerS }

// idpNA explains missing IdP process figures.
func idpNA(src string) string {
	if src == "" {
		return "no process samples"
	}
	return "no " + src + " samples inside the steady-state windows"
}

// noDatabaseNA is the N/A reason of every PostgreSQL figure of a product
// that uses none.
const noDatabaseNA = "no database: the product's meta.json records none"

// dbNA explains missing PostgreSQL process figures of database source db.
func dbNA(all []schema.Sample, db string) string {
	switch {
	case db == NoDatabase:
		return noDatabaseNA
	case len(values(all, SourcePostgres, nil, cpuPct)) == 0:
		return "no postgres samples"
	case len(values(all, SourcePostgres, hasRSS, cpuPct)) == 0:
		return "PostgreSQL processes not visible to the sampler"
	}
	return "no postgres samples inside the measured window"
}

// dbStatsNA explains missing PostgreSQL statistics (TPS, connections) of
// database source db.
func dbStatsNA(all []schema.Sample, db string) string {
	if db == NoDatabase {
		return noDatabaseNA
	}
	if len(values(all, SourcePostgres, nil, cpuPct)) == 0 {
		return "no postgres samples"
	}
	return "no postgres samples inside the window"
}

// steadyWindows are the measured windows of every step of c's steady level.
func steadyWindows(c Cell) []Window {
	var ws []Window
	for _, i := range c.SteadyWindows().Steps {
		s := c.Ladder[i].Step
		ws = append(ws, Window{Start: s.Start, End: s.End})
	}
	return ws
}

// stepUsage computes one steady level's figures and verdict: the sampler's
// records inside all its windows ws, the driver's figures of sf (its median
// window).
func stepUsage(sc schema.ScenarioInfo, sf StepFile, ws []Window, samples []schema.Sample, idp, db string) StepUsage {
	s := sf.Step
	in := steps.SamplesIn(samples, ws)
	const inWin = " inside the window"
	u := StepUsage{Scenario: sc, File: sf, Records: len(in)}
	u.IdPCPU = medianFigure(values(in, idp, nil, cpuPct), cmp.Or(noSource(idp), "no "+idp+" samples"+inWin))
	u.DBCPU = medianFigure(values(in, db, hasRSS, cpuPct), dbNA(samples, db))
	keep, get, _ := memOf(in, db)
	u.DBRSS = medianFigure(values(in, db, keep, get), dbNA(samples, db))
	u.TPS = medianFigure(values(in, SourcePostgres, nil, xact), dbStatsNA(samples, db))
	u.ConnsMedian = medianFigure(values(in, SourcePostgres, nil, conns), dbStatsNA(samples, db))
	u.ConnsMax = maxFigure(values(in, SourcePostgres, nil, conns), dbStatsNA(samples, db))
	u.HostBusy = medianFigure(values(in, SourceHost, nil, cpuPct), "no host samples"+inWin)
	u.HostSteal = medianFigure(values(in, SourceHost, hasSteal, stealPct), "no steal figures"+inWin)
	u.Usage = Usage{Cores: s.Host.CPUs, IdPCPU: u.IdPCPU.Value, DBCPU: u.DBCPU.Value, HostBusy: u.HostBusy.Value,
		DriverCPU: s.Driver.CPUPct, DriverProcs: s.Driver.GOMAXPROCS, DriverLimit: s.Driver.Limited, DriverReason: s.Driver.LimitedReason,
		HasIdP: u.IdPCPU.OK, HasDB: u.DBCPU.OK, HasHost: u.HostBusy.OK}
	if !u.HostBusy.OK && s.Driver.HostCPUPct > 0 {
		u.Usage.HostBusy, u.Usage.HasHost, u.Usage.HostFromStep = s.Driver.HostCPUPct, true, true
	}
	u.VerdictKind, u.Verdict = Verdict(u.Usage)
	return u
}

func noSource(idp string) string {
	if idp == "" {
		return "no process samples"
	}
	return ""
}

// topQueries merges the final postgres record's top statements of every
// file (a resumed run writes one file per segment, each with its own
// pg_stat_statements reset) by query text and returns the TopQueryCount
// with the highest total time.
func topQueries(files []SampleFile) ([]schema.Query, string) {
	byText := map[string]*schema.Query{}
	var order []string
	sawDB := false
	for _, sf := range files {
		final := lastTop(sf.Samples)
		sawDB = sawDB || hasSource(sf.Samples, SourcePostgres)
		for _, q := range final {
			if byText[q.Query] == nil {
				byText[q.Query] = &schema.Query{Query: q.Query}
				order = append(order, q.Query)
			}
			m := byText[q.Query]
			m.Calls += q.Calls
			m.TotalMS += q.TotalMS
		}
	}
	if len(order) == 0 {
		return nil, topNA(len(files), sawDB)
	}
	out := make([]schema.Query, 0, len(order))
	for _, text := range order {
		q := *byText[text]
		if q.Calls > 0 {
			q.MeanMS = q.TotalMS / float64(q.Calls)
		}
		out = append(out, q)
	}
	slices.SortStableFunc(out, func(a, b schema.Query) int { return cmp.Compare(b.TotalMS, a.TotalMS) })
	return out[:min(len(out), TopQueryCount)], ""
}

// lastTop returns the top queries of the last postgres record that has them.
func lastTop(samples []schema.Sample) []schema.Query {
	for i := len(samples) - 1; i >= 0; i-- {
		if samples[i].Source == SourcePostgres && len(samples[i].TopQueries) > 0 {
			return samples[i].TopQueries
		}
	}
	return nil
}

func hasSource(samples []schema.Sample, src string) bool {
	for _, s := range samples {
		if s.Source == src {
			return true
		}
	}
	return false
}

func topNA(files int, sawDB bool) string {
	switch {
	case files == 0:
		return "no sampler records"
	case !sawDB:
		return "no postgres samples"
	}
	return "no final postgres record with top_queries (pg_stat_statements not installed, or the sampler did not stop cleanly)"
}
