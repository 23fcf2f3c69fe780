package schema

import "time"

// Schema strings of the other records.
const (
	ColdstartV1 = "idpbench.coldstart/v1"
	SampleV1    = "idpbench.sample/v1"
	MetaV1      = "idpbench.meta/v1"
	FactsV1     = "idpbench.facts/v1"
)

// Coldstart is how long a product took from start to ready.
type Coldstart struct {
	Schema         string `json:"schema"`          // ColdstartV1
	ToolVersion    string `json:"tool_version"`    // coldstart's VCS revision
	Product        string `json:"product"`         // product name
	ProductVersion string `json:"product_version"` // product version
	// Mode A: fresh database, including initialisation and migrations.
	// Mode B: initialised database, product restarted.
	Mode           string    `json:"mode"`
	Start          time.Time `json:"start"`            // when the command was started (RFC 3339)
	SecondsToReady float64   `json:"seconds_to_ready"` // seconds from start to the first ready response
	// PeakRSSBytes: the peak until ready, bytes: the RSS of the command's
	// process tree, or with PeakMeasuredAs "cgroup" the memory of the
	// product's containers (PeakSources) summed, usage minus inactive page
	// cache (compose mode: the command is only the compose client).
	PeakRSSBytes   int64    `json:"peak_rss_bytes"`
	PeakMeasuredAs string   `json:"peak_measured_as,omitempty"` // "" (the process tree's RSS) or PeakCgroup
	PeakSources    []string `json:"peak_sources,omitempty"`     // with PeakCgroup: the containers measured ("container:NAME")
	ReadyURL       string   `json:"ready_url"`                  // the URL polled
	ReadyStatus    int      `json:"ready_status"`               // the HTTP status taken as ready
	Command        []string `json:"command"`                    // the command started (secrets never belong here)
	Status         string   `json:"status"`                     // complete | error | interrupted
	Error          string   `json:"error,omitempty"`            // why it never became ready
}

// PeakCgroup is Coldstart.PeakMeasuredAs for a peak of containers' memory.
const PeakCgroup = "cgroup"

// Sample is one line of sampler output.
type Sample struct {
	Schema string    `json:"schema"` // SampleV1
	T      time.Time `json:"t"`      // sample time (RFC 3339)
	// Source: "process:<name>", "container:<name>", "postgres" or "host".
	Source      string  `json:"source"`
	RSSBytes    int64   `json:"rss_bytes,omitempty"`   // resident set, bytes (process tree total)
	PSSBytes    int64   `json:"pss_bytes,omitempty"`   // proportional set, bytes, where readable
	CPUPct      float64 `json:"cpu_pct"`               // since the previous sample, 100 = one core (host: % of all cores)
	Threads     int64   `json:"threads,omitempty"`     // threads of the process tree
	Processes   int     `json:"processes,omitempty"`   // processes in the tree
	XactPerS    float64 `json:"xact_per_s,omitempty"`  // postgres: commits+rollbacks per second
	RowsPerS    float64 `json:"rows_per_s,omitempty"`  // postgres: rows returned+fetched+written per second
	Connections int     `json:"connections,omitempty"` // postgres: backends in pg_stat_activity
	// StealPct, host only: the time the hypervisor ran something else while
	// this machine's cores wanted to run (steal in /proc/stat) since the
	// previous sample, percent of all cores; nil where not read. A busy
	// neighbour on a shared machine shows here, not in anyone's CPU figure.
	StealPct *float64 `json:"steal_pct,omitempty"`
	// ProbeUS, host only: how fast the machine's cores ran at this tick:
	// the CPU time, in microseconds, that a fixed piece of work
	// (internal/hostprobe: integer hashing, dependent random reads over
	// 8 MiB) took on the sampler's thread, the median of 3 runs. Lower is
	// faster. The same work
	// takes longer when a neighbour shares the physical core or its caches,
	// which neither steal nor any CPU figure shows. Comparable between
	// samples of one machine, most between windows of one scenario and
	// level (the product's own load on the other cores moves it too); nil
	// where not measured (--host-probe=false, no per-thread CPU clock).
	ProbeUS    *float64 `json:"probe_us,omitempty"`
	TopQueries []Query  `json:"top_queries,omitempty"` // postgres, last record only: by total time
}

// Query is one pg_stat_statements row.
type Query struct {
	Query   string  `json:"query"`    // normalised text
	Calls   int64   `json:"calls"`    // executions
	TotalMS float64 `json:"total_ms"` // total execution time, ms
	MeanMS  float64 `json:"mean_ms"`  // mean execution time, ms
}

// Meta statuses (Meta.Status).
const (
	MetaOK = "ok"
	MetaNA = "na"
)

// Meta describes one product's run: what ran, how it was configured and
// every deviation from the product's official defaults. aggregate reads it
// for the header, the fairness appendix and N/A reasons.
type Meta struct {
	Schema         string `json:"schema"`          // MetaV1
	Product        string `json:"product"`         // adapter name, e.g. "hydra"
	ProductVersion string `json:"product_version"` // exact version run
	// Status is MetaOK when the product ran, MetaNA when it could not (see NAReason).
	Status   string `json:"status"`
	NAReason string `json:"na_reason,omitempty"`
	// ScenarioNA maps a scenario name to why it has no result for this product.
	ScenarioNA    map[string]string `json:"scenario_na,omitempty"`
	Endpoints     map[string]string `json:"endpoints,omitempty"`      // scenario -> URL measured
	ConfigSources []Link            `json:"config_sources,omitempty"` // where the configuration comes from
	Settings      map[string]string `json:"settings,omitempty"`       // settings this run gave the product (its flags and config file)
	// Facts are the configuration in force, read back from the running
	// product or its database after setup (readback), or, where nothing
	// can be read, stated from the documentation and marked so.
	Facts []Fact `json:"facts,omitempty"`
	// Known are the product's own limitations that shape a result (an
	// upstream bottleneck), each with its reference.
	Known      []Known           `json:"known,omitempty"`
	Deviations []Note            `json:"deviations,omitempty"` // departures from official defaults, each with why
	Warmups    []Warmup          `json:"warmups,omitempty"`    // non-default warmups and why
	Pools      []PoolInfo        `json:"pools,omitempty"`      // pools minted for the run
	Notes      []string          `json:"notes,omitempty"`
	Database   map[string]string `json:"database,omitempty"` // PostgreSQL version and settings, identical for all products
	Start      time.Time         `json:"start,omitzero"`     // when this product's run began; zero: not recorded
	End        time.Time         `json:"end,omitzero"`       // when it finished
	// Placement is where the run put the load generator and the product;
	// nil in a meta from before it was recorded.
	Placement *Placement `json:"placement,omitempty"`
	// Rounds is how the run repeated the product's ladders; nil in a meta
	// from before it was recorded (each product's rounds back to back).
	Rounds *Rounds `json:"rounds,omitempty"`
	// Images are the images the containers of a compose-mode run ran, one a
	// container; none in native mode.
	Images []Image `json:"images,omitempty"`
}

// Image origins (Image.Origin).
const (
	// ImageOfficial: the image the compose file pins (or one its Dockerfile
	// built from the official image).
	ImageOfficial = "official"
	// ImageLocal: a local equivalent built here when the official image
	// could not be pulled (scripts/lib/images.sh); StandsFor names the
	// official image.
	ImageLocal = "local"
)

// Image is the image one container of a compose-mode run ran.
type Image struct {
	Service   string `json:"service"`   // the compose service
	Container string `json:"container"` // its container name
	Ref       string `json:"ref"`       // the image as the container was created from it (repo:tag)
	// ID is the image's ID, the sha256 digest of its configuration: the
	// same image has the same ID on every engine (docker save, load).
	ID     string `json:"id"`
	Origin string `json:"origin"` // ImageOfficial | ImageLocal
	// StandsFor is, for a local equivalent, the official image it stands
	// in for, as its org.idpbench.local label says.
	StandsFor string `json:"stands_for,omitempty"`
}

// Round orders (Rounds.Order).
const (
	// RoundsInterleaved: round r of every product before round r+1 of any;
	// between its rounds a product stays up, idle, while the others run.
	RoundsInterleaved = "interleaved"
	// RoundsRandom: interleaved, and every round after the first draws
	// a new order of the products and, within each product's round, of
	// its scenarios, from Rounds.Seed (run.Order).
	RoundsRandom = "interleaved-random"
	// RoundsSingle: one round, nothing to order.
	RoundsSingle = "single"
)

// Rounds records how a run repeated its ladders (run-comparison.sh
// --repeats): Count rounds, in Order. Round 1 measures each ladder to its
// knee, later rounds repeat its candidate steady levels.
type Rounds struct {
	Count int    `json:"count"`
	Order string `json:"order"`          // RoundsInterleaved | RoundsRandom | RoundsSingle
	Seed  uint64 `json:"seed,omitempty"` // RoundsRandom: the draw's seed (IDPBENCH_ORDER_SEED)
}

// Placement modes (Placement.Mode).
const (
	PlacementPinned = "pinned" // driver and server on disjoint CPU sets
	PlacementShared = "shared" // nothing pinned: they share every CPU
)

// Placement records the CPU sets of a product's run (run-comparison.sh
// --driver-cpus, --server-cpus). Lists are as taskset -c and
// /proc/PID/status Cpus_allowed_list write them: "3", "0-2", "0,2".
type Placement struct {
	Mode string `json:"mode"` // PlacementPinned | PlacementShared
	// DriverCPUs are the CPUs of the load generator (loadstep, the minting
	// of pools) and of the measurement tools (sampler, coldstart); every CPU
	// of the host when shared.
	DriverCPUs string `json:"driver_cpus"`
	// ServerCPUs are the CPUs of the product's process tree and of its
	// PostgreSQL (in compose mode: the containers' cpuset); every CPU of the
	// host when shared.
	ServerCPUs string `json:"server_cpus"`
	HostCPUs   int    `json:"host_cpus"` // CPUs the run could use (nproc), count
	// Reason says why a shared run is shared, e.g. "2 CPUs: fewer than 4,
	// driver and server share them"; empty when pinned.
	Reason string `json:"reason,omitempty"`
}

// Link names a configuration source.
type Link struct {
	What string `json:"what"`
	URL  string `json:"url"`
}

// Note is a deviation with its reason.
type Note struct {
	What string `json:"what"`
	Why  string `json:"why"`
}

// Warmup records a warmup that differs from the default.
type Warmup struct {
	Scenario string  `json:"scenario,omitempty"` // empty = every scenario
	WarmupS  float64 `json:"warmup_s"`           // seconds
	Why      string  `json:"why"`
}

// PoolInfo records one minted pool.
type PoolInfo struct {
	Scenario string `json:"scenario"` // scenario that uses it
	Kind     string `json:"kind"`     // access_token | refresh_token | assertion ...
	Mode     string `json:"mode"`     // PoolModes
	Size     int    `json:"size"`     // credentials
	Flow     string `json:"flow"`     // mintpool flow
}

// Pool modes (PoolInfo.Mode, loadstep --pool-mode): how a step uses its pool.
const (
	PoolReuse   = "reuse"   // round-robin, each connection its own slice
	PoolConsume = "consume" // each credential used once across all connections
	PoolChain   = "chain"   // each connection refreshes with the token its last response returned
)

// PoolModes are the pool modes, in the order help texts list them.
var PoolModes = []string{PoolReuse, PoolConsume, PoolChain}

// Fact sources (Fact.Source).
const (
	FactRead       = "read"                 // read from the running product or its database
	FactDocumented = "documented, not read" // nothing running tells it; From names the document
)

// Fact is one configuration fact of a product as it ran.
type Fact struct {
	Name   string `json:"name"`   // what it is, e.g. "password hashing"
	Value  string `json:"value"`  // the value in words, units included
	Source string `json:"source"` // FactRead | FactDocumented
	// From is where it was read (table and column, endpoint, metric,
	// binary) or, for FactDocumented, the URL of the document.
	From string `json:"from"`
}

// Known is a limitation of the product itself that shapes a result.
type Known struct {
	Scenario string `json:"scenario,omitempty"` // the scenario it shapes; "" = several
	What     string `json:"what"`               // what it is and what it does to the numbers
	Ref      string `json:"ref"`                // URL of the issue or code that shows it
}

// Facts is readback's output: what the running product says of itself.
// Run scripts merge Facts into the product's Meta.
type Facts struct {
	Schema  string    `json:"schema"`  // FactsV1
	Product string    `json:"product"` // product name
	Version string    `json:"version"` // the version the running product reports
	Read    time.Time `json:"read"`    // when the facts were read (RFC 3339)
	Facts   []Fact    `json:"facts"`
}
