package schema

import "time"

// StepV1 is the schema string of a step result.
const StepV1 = "idpbench.step/v1"

// Step statuses.
const (
	StatusComplete    = "complete"    // the measured window ran to its end
	StatusInterrupted = "interrupted" // stopped early (SIGINT); counts cover the part that ran
	StatusError       = "error"       // the step could not measure; see Error
	// StatusTargetLost: the target stopped accepting connections during the
	// step and had not come back by its end (TargetLostAt says since when).
	// Its counts cover what happened; it is never a steady state, and a
	// resumed run measures the step again.
	StatusTargetLost = "target_lost"
)

// Latency models: what a latency figure measures.
const (
	// ModelClosedLoop: service time under N outstanding requests, from the
	// moment a request is written to the moment its response is complete.
	ModelClosedLoop = "closed_loop_service_time"
	// ModelOpenLoop: latency from each request's intended send time (rate mode,
	// the wrk2 model), which includes queueing the driver had to do.
	ModelOpenLoop = "open_loop_intended_start"
)

// Step is the result of one load step: a warmup, then a measured window.
type Step struct {
	Schema         string            `json:"schema"`          // always StepV1 for this struct
	ToolVersion    string            `json:"tool_version"`    // loadstep's VCS revision or module version
	Product        string            `json:"product"`         // product under test, e.g. "hydra"
	ProductVersion string            `json:"product_version"` // product version as given by the run
	Scenario       string            `json:"scenario"`        // scenario name, see Scenarios
	Labels         map[string]string `json:"labels,omitempty"`

	TargetURL   string  `json:"target_url"`  // the full endpoint URL (no credentials)
	Connections int     `json:"connections"` // concurrent connections of this record (-c; with a segment, this agent's share)
	RateRPS     float64 `json:"rate_rps"`    // intended rate of this record in requests/s (with a segment, this agent's share); 0 = closed loop
	WarmupS     float64 `json:"warmup_s"`    // warmup actually spent before the measured window (start - launch), seconds
	DurationS   float64 `json:"duration_s"`  // intended measured window, seconds
	IntervalS   float64 `json:"interval_s"`  // per-interval histogram length, seconds
	TimeoutS    float64 `json:"timeout_s"`   // per-request timeout, seconds
	// WarmupRule is present only when the warmup was adaptive (loadstep
	// --warmup-max): the rule that decided when the window began. Absent
	// for a fixed warmup, whose length is warmup_s.
	WarmupRule *WarmupRule `json:"warmup_rule,omitempty"`
	// WarmupStable is present only with WarmupRule: true when the
	// throughput was stable by the rule when the warmup ended, false when
	// the cap (max_s) ended it first. Absent when the step was interrupted
	// before either.
	WarmupStable *bool `json:"warmup_stable,omitempty"`
	// WarmupQPS is present only with WarmupRule: the completed requests
	// (iterations in an iteration step) per second of each interval of the
	// warmup, in order from its launch, so the curve that led to the
	// decision can be seen. Intervals are interval_s long as the watcher
	// measured them (a late wake-up shows as a longer one); the last may be
	// shorter.
	WarmupQPS []float64 `json:"warmup_qps,omitempty"`
	// WarmupCorrectedMS is present only with WarmupRule in rate mode: the
	// mean corrected latency (from the intended send time) of the requests
	// answered in each warmup interval, milliseconds, -1 for an interval
	// without an answer; the curve the rate-mode rule (settle
	// corrected_latency) read.
	WarmupCorrectedMS []float64 `json:"warmup_corrected_ms,omitempty"`
	// RampS is present only in rate mode with a ramp (loadstep --ramp):
	// the schedule climbed linearly from 0 to rate_rps over the first
	// ramp_s seconds of the warmup, then held it.
	RampS float64 `json:"ramp_s,omitempty"`
	// JIT is present when loadstep watched the product's JIT compilers
	// (--jit-pidfile): how busy they were in the warmup and the window.
	JIT *StepJIT `json:"jit,omitempty"`

	// StartAt is present only when loadstep was told when to begin
	// (--start-at): the requested beginning of the warmup (RFC 3339), the
	// moment every agent of a multi-agent step shares. The step is
	// reckoned from it, not from when this agent woke: the warmup runs
	// from start_at, the window starts at start_at + warmup_s, and in rate
	// mode the schedule's first slot is start_at.
	StartAt *time.Time `json:"start_at,omitempty"`
	// StartedAt is when this agent's workers actually began (RFC 3339):
	// after its setup (pools read, target dialled) and, with start_at,
	// its wait for it. Absent in older records and in a step interrupted
	// while it waited for start_at.
	StartedAt *time.Time `json:"started_at,omitempty"`
	// StartLateMS is present with StartAt: started_at - start_at,
	// milliseconds (the agent's timer and scheduling delay; loadstep
	// refuses to start more than one interval late).
	StartLateMS *float64 `json:"start_late_ms,omitempty"`
	// StartSkewMS is present only in merged records (aggregate merge):
	// the largest difference between the merged agents' actual starts,
	// max - min of their started_at (of their start, for records
	// without started_at), milliseconds.
	StartSkewMS *float64 `json:"start_skew_ms,omitempty"`
	// Segment is present only when the step was one agent's share of a
	// step several agents ran together (loadstep --segment I/N);
	// connections and rate_rps are then this agent's share, the
	// segment's total_* the whole step's. Absent in merged records.
	Segment *Segment `json:"segment,omitempty"`

	Start  time.Time `json:"start"`           // start of the measured window (RFC 3339)
	End    time.Time `json:"end"`             // end of the measured window (RFC 3339)
	Status string    `json:"status"`          // StatusComplete | StatusInterrupted | StatusTargetLost | StatusError
	Error  string    `json:"error,omitempty"` // why the step failed, when Status is StatusError
	// Check is the success rule the step's responses were judged by: the
	// scenario's rule (ScenarioCheck; see check.go) or, for the custom
	// request scenario and --introspect-check answered, the rule the flags
	// chose. ok counts only responses that passed it. Empty in records of
	// loadstep versions before the field existed: such a step's rule is
	// unknown, and the report does not compare it.
	Check string `json:"check"`

	Requests    int64            `json:"requests"`     // ok + failed, requests in the measured window
	OK          int64            `json:"ok"`           // 2xx responses that passed Check (never a 4xx or 5xx)
	Errors      Errors           `json:"errors"`       // failed requests by class
	StatusCodes map[string]int64 `json:"status_codes"` // HTTP status -> count, all responses received
	ErrorRate   float64          `json:"error_rate"`   // failed / requests, a fraction (0.01 = 1%)
	QPS         float64          `json:"qps"`          // requests per second of the measured window

	LatencyModel string  `json:"latency_model"` // ModelClosedLoop or ModelOpenLoop
	LatencyMS    Latency `json:"latency_ms"`    // summary of Histogram, milliseconds
	// Histogram holds every measured request's latency in ns, HdrHistogram V2
	// compressed, base64 ("HIST..."), geometry New(1, 60e9, 3). In rate mode it
	// is the service time (from the actual send).
	Histogram string `json:"histogram"`
	// CorrectedHistogram is present only in rate mode: latency in ns from each
	// request's intended send time. Its summary is CorrectedLatencyMS.
	CorrectedHistogram string   `json:"corrected_histogram,omitempty"`
	CorrectedLatencyMS *Latency `json:"corrected_latency_ms,omitempty"`
	// Late is present only in rate mode: requests of the window sent more
	// than LateThresholdMS after their intended send time (their connection
	// was still waiting for an earlier response, or the driver was starved),
	// plus those never sent because their intended time plus the timeout had
	// passed before their connection was free (counted as errors.timeout).
	Late *int64 `json:"late,omitempty"`
	// LateMaxMS is present only in rate mode: the largest delay, in
	// milliseconds, between a request's intended and actual send time (or,
	// for one never sent, the moment it was given up).
	LateMaxMS *float64 `json:"late_max_ms,omitempty"`
	// Completed is present only in rate mode: the requests (iterations)
	// whose response was complete within the measured window, whatever
	// their intended send time: what the product did, where requests
	// counts what was offered (those due in the window).
	Completed *int64 `json:"completed,omitempty"`
	// CompletedRPS is present with Completed: completed / window seconds,
	// the rate the product achieved beside rate_rps, the one offered.
	CompletedRPS *float64 `json:"completed_rps,omitempty"`
	// BacklogEnd is present only in rate mode: the requests due before
	// the window's end whose response was not complete when it ended
	// (in flight or still waiting to be sent): the queue the window left.
	BacklogEnd *int64 `json:"backlog_end,omitempty"`
	// Sustain is present only in rate mode (and absent in older records):
	// whether the product kept up with the schedule through the window,
	// and the figures the rule (steps.Sustain) judged it by.
	Sustain *Sustain `json:"sustain,omitempty"`

	// ConnectErrors counts the window's connection attempts that failed
	// (refused, reset, DNS, TLS, no answer): none of them put a request on
	// the wire, so none is in requests or errors. A connection whose
	// attempt failed waits before the next (1 ms, doubling up to the
	// interval), so a dead target is not a tight loop.
	ConnectErrors ConnectErrors `json:"connect_errors"`
	// UnreachableS is how much of the measured window, in seconds, the
	// target refused connections: from a failed connection attempt to the
	// next complete HTTP response.
	UnreachableS float64 `json:"unreachable_s"`
	// TargetLostAt is present when Status is StatusTargetLost: the target
	// was unreachable from then (its first failed attempt after its last
	// response) to the end of the step.
	TargetLostAt *time.Time `json:"target_lost_at,omitempty"`

	Intervals []Interval `json:"intervals"` // consecutive slices of the measured window
	Pool      *PoolUse   `json:"pool,omitempty"`
	Driver    Driver     `json:"driver"`
	Host      Host       `json:"host"`
	// ServerMetrics is present only when loadstep scraped the product's
	// own metrics (--server-metrics): the endpoint and each scrape, whose
	// raw exposition text lies beside the step file. Absent in older
	// records and when no metrics URL was given.
	ServerMetrics *ServerMetrics `json:"server_metrics,omitempty"`
	// Agents is the number of loadstep processes merged into this record
	// (aggregate merge); 0 or 1 means a single agent. A merge of
	// segments holds all of them: agents = segment.of.
	Agents int `json:"agents,omitempty"`

	// CountUnit says what the step counts: absent (CountRequests) for the
	// single-request scenarios, CountIterations for the iteration scenarios
	// (auth_code, client_credentials_login), where one iteration sends several
	// named HTTP requests in order. In an iteration step requests, ok,
	// errors, error_rate, qps (iterations/s), latency_ms, histogram,
	// corrected_histogram, late and the intervals count and time ITERATIONS:
	// an iteration fails, in the class of its failing request, as soon as
	// one of its requests fails (it stops there); its latency runs from the
	// send of its first request to the end of its last response; the
	// histograms hold every iteration that ended with a complete HTTP
	// response. status_codes there counts every HTTP response of the
	// window's iterations (the sum over RequestsByName).
	CountUnit string `json:"count_unit,omitempty"`
	// HTTPRequests is present only in iteration steps: the HTTP requests the
	// window's iterations sent, the sum of RequestsByName[*].Requests.
	HTTPRequests int64 `json:"http_requests,omitempty"`
	// RequestOrder is present only in iteration steps: the request names in
	// the order an iteration sends them (a flow may skip a hop the product
	// does not need, e.g. a login page served by the authorize request).
	RequestOrder []string `json:"request_order,omitempty"`
	// RequestsByName is present only in iteration steps: the HTTP requests
	// of the window's iterations by request name (named like Zitadel's k6
	// trends: oidc_token, oidc_user_info, login_authorize ...).
	RequestsByName map[string]NamedRequests `json:"requests_by_name,omitempty"`
}

// ServerMetrics is the product's own view of a step: its Prometheus text
// exposition endpoint scraped at the measured window's start (once the
// warmup has decided it), after the window's drain (every request of the
// window has completed by then), and with --server-metrics-every also in
// between. The scrapes are raw data: internal/servermetrics turns a start
// and an end scrape into the server's request count, status counts and
// latency percentiles for the scenario's endpoint.
type ServerMetrics struct {
	URL string `json:"url"` // the endpoint scraped (no credentials: userinfo is removed)
	// EveryS is the period of the scrapes during the window, seconds
	// (--server-metrics-every); absent when only the edges were scraped.
	EveryS  float64        `json:"every_s,omitempty"`
	Scrapes []ServerScrape `json:"scrapes"` // in the order they were taken
	// Selector is present when the step was told which series are the
	// scenario's endpoint (--server-metrics-select, the generic oidc
	// adapter's METRICS_* keys); absent, the report uses the product's
	// table in internal/servermetrics.
	Selector *ServerSelector `json:"selector,omitempty"`
}

// ServerSelector names the series of the scenario's endpoint in the
// exposition: a family (histogram, summary or counter) and exact label
// matches, and the label that holds the HTTP status.
type ServerSelector struct {
	Family      string            `json:"family"`       // e.g. http_server_requests_seconds
	Match       map[string]string `json:"match"`        // label -> value, all must match
	StatusLabel string            `json:"status_label"` // e.g. status, code
}

// Edges of a server scrape (ServerScrape.Edge).
const (
	EdgeStart  = "start"  // at the start of the measured window
	EdgeEnd    = "end"    // after the window and its drain
	EdgeDuring = "during" // inside the window (--server-metrics-every)
)

// ServerScrape is one scrape of the product's metrics endpoint. A failed
// scrape (unreachable, timed out, a status other than 200) has Error and
// no File; it never fails the step.
type ServerScrape struct {
	At   time.Time `json:"at"`   // when the request was sent (RFC 3339)
	Edge string    `json:"edge"` // EdgeStart | EdgeEnd | EdgeDuring
	// DurationMS is how long the scrape took, from sending the request to
	// the end of the body, milliseconds: requests that completed meanwhile
	// may or may not be in its counts.
	DurationMS float64 `json:"duration_ms"`
	// File is the raw exposition text, a path relative to the step file's
	// directory (a base name when --server-metrics-out lies beside the
	// step, as by default); mode 0644: metrics hold no secrets. Absent
	// when the scrape failed.
	File  string `json:"file,omitempty"`
	Bytes int64  `json:"bytes,omitempty"` // size of File, bytes
	Error string `json:"error,omitempty"` // why the scrape failed
}

// Segment is one agent's share of a step that Of agents ran together
// (loadstep --segment I/N): connections Connections/Of each, the
// remainder to the lowest indexes; in rate mode the slots Index, Index+Of,
// Index+2*Of, ... of the step's one schedule of TotalRateRPS; from every
// pool the credentials at positions p (0-based, in file order) with
// p mod Of == Index.
type Segment struct {
	Index            int     `json:"index"`             // this agent, 0-based, below of
	Of               int     `json:"of"`                // agents in all (N)
	TotalConnections int     `json:"total_connections"` // the whole step's connections over all agents (-c)
	TotalRateRPS     float64 `json:"total_rate_rps"`    // the whole step's rate over all agents, requests/s (--rate); 0 = closed loop
}

// WarmupRule is loadstep's adaptive warmup: at least MinS, then until the
// last StableIntervals intervals' throughput lies within ±TolerancePct of
// its mean (a mean above zero), at most MaxS.
type WarmupRule struct {
	MinS            float64 `json:"min_s"`            // the floor, seconds (--warmup)
	MaxS            float64 `json:"max_s"`            // the cap, seconds (--warmup-max)
	StableIntervals int     `json:"stable_intervals"` // consecutive intervals that must be stable (--warmup-stable)
	TolerancePct    float64 `json:"tolerance_pct"`    // each interval's throughput within ± this percent of their mean (--warmup-tolerance)
	// JITMaxPct, when above 0: in each of those intervals the product's
	// JIT compilers were also busy at most this percent of one core
	// (--warmup-jit-max; only where there is a JIT, see Step.JIT).
	JITMaxPct float64 `json:"jit_max_pct,omitempty"`
	// Settle is what the rule read: absent, the completed requests of each
	// interval (closed loop); SettleCorrectedLatency in rate mode, where
	// the rate fixes the throughput: the mean corrected latency of each
	// interval after the ramp, StableIntervals of them none more than
	// TolerancePct percent below the one before.
	Settle string `json:"settle,omitempty"`
}

// SettleCorrectedLatency is WarmupRule.Settle in rate mode.
const SettleCorrectedLatency = "corrected_latency"

// StepJIT is how busy a JVM's JIT compiler threads were during a step:
// the CPU time of HotSpot's C1 and C2 CompilerThreads (/proc/PID/task), in
// percent of one core (100: one core compiling all the time; several
// compiler threads can exceed it).
type StepJIT struct {
	PID       int       `json:"pid,omitempty"`        // the JVM whose counters were read
	NA        string    `json:"na,omitempty"`         // why nothing (more) was read: no JVM (a product compiled ahead of time), or the reading failed
	WarmupPct []float64 `json:"warmup_pct,omitempty"` // per warmup interval, as warmup_qps (adaptive warmups)
	WindowPct *float64  `json:"window_pct,omitempty"` // over the measured window
}

// Count units (Step.CountUnit).
const (
	CountRequests   = ""          // one HTTP request per iteration (the field is absent)
	CountIterations = "iteration" // an iteration of several named HTTP requests
)

// NamedRequests are the HTTP requests of one name in an iteration step. For
// every name requests = ok + failed; an iteration ends at its first failed
// request, so the failed counts of all names sum to the step's failed
// iterations, and for a flow without optional hops the requests of one
// name equal the ok of the name before it.
type NamedRequests struct {
	Requests    int64            `json:"requests"`     // requests of this name sent by the window's iterations
	OK          int64            `json:"ok"`           // requests that got the expected status and passed the check
	Errors      Errors           `json:"errors"`       // failed requests by class (pool_exhausted is always 0)
	StatusCodes map[string]int64 `json:"status_codes"` // HTTP status -> count, all responses received
	LatencyMS   Latency          `json:"latency_ms"`   // summary of Histogram, milliseconds
	// Histogram holds the service time in ns (send to complete response)
	// of every request of this name that got a complete HTTP response;
	// same encoding and geometry as Step.Histogram.
	Histogram string `json:"histogram"`
}

// Errors counts failed requests by class. Their sum is the failed count.
type Errors struct {
	Non2xx        int64 `json:"non2xx"`         // a response with a status outside 200-299
	Socket        int64 `json:"socket"`         // connect/read/write failure or a malformed response
	Timeout       int64 `json:"timeout"`        // no complete response within the timeout
	Check         int64 `json:"check"`          // 2xx, but the body failed the scenario check
	PoolExhausted int64 `json:"pool_exhausted"` // an iteration found its consume pool empty and could not be sent
}

// Total is the number of failed requests.
func (e Errors) Total() int64 {
	return e.Non2xx + e.Socket + e.Timeout + e.Check + e.PoolExhausted
}

// Add returns the element-wise sum.
func (e Errors) Add(o Errors) Errors {
	return Errors{e.Non2xx + o.Non2xx, e.Socket + o.Socket, e.Timeout + o.Timeout,
		e.Check + o.Check, e.PoolExhausted + o.PoolExhausted}
}

// ConnectErrors counts failed connection attempts by cause.
type ConnectErrors struct {
	Refused int64 `json:"refused"` // ECONNREFUSED: nothing listens (the target died)
	Reset   int64 `json:"reset"`   // reset during the TCP handshake
	DNS     int64 `json:"dns"`     // the host name did not resolve
	TLS     int64 `json:"tls"`     // the TLS handshake failed
	Timeout int64 `json:"timeout"` // the handshake did not complete within the timeout
	Other   int64 `json:"other"`   // any other failure to connect (unreachable network, no local port)
	// Unsent is present only in rate mode: requests of the schedule given
	// up, never sent, because their connection could not be opened before
	// their intended time plus the timeout.
	Unsent int64 `json:"unsent,omitempty"`
}

// Total is the number of failed connection attempts (unsent requests are
// not attempts).
func (c ConnectErrors) Total() int64 {
	return c.Refused + c.Reset + c.DNS + c.TLS + c.Timeout + c.Other
}

// Add returns the element-wise sum.
func (c ConnectErrors) Add(o ConnectErrors) ConnectErrors {
	return ConnectErrors{c.Refused + o.Refused, c.Reset + o.Reset, c.DNS + o.DNS, c.TLS + o.TLS,
		c.Timeout + o.Timeout, c.Other + o.Other, c.Unsent + o.Unsent}
}

// Latency summarises a histogram. All values are milliseconds.
type Latency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P75  float64 `json:"p75"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// Interval is one slice of the measured window.
type Interval struct {
	TS       float64 `json:"t_s"`      // start of the slice, seconds from Step.Start
	LengthS  float64 `json:"length_s"` // length of the slice, seconds (the last may be shorter)
	Requests int64   `json:"requests"` // requests sent in the slice (attributed by send time; in rate mode by intended send time)
	Errors   int64   `json:"errors"`   // failed requests sent in the slice
	// ConnectErrors is the slice's failed connection attempts (not
	// requests; see Step.ConnectErrors).
	ConnectErrors int64   `json:"connect_errors,omitempty"`
	QPS           float64 `json:"qps"`       // requests / length_s
	P50MS         float64 `json:"p50_ms"`    // milliseconds
	P99MS         float64 `json:"p99_ms"`    // milliseconds
	MaxMS         float64 `json:"max_ms"`    // milliseconds
	Histogram     string  `json:"histogram"` // same encoding and geometry as Step.Histogram
	// Rate mode only (absent otherwise): the slice's corrected histogram
	// (latency from the intended send time; same encoding and geometry), its
	// P50, P99 and max in milliseconds, and its late requests (see Step.Late).
	// In rate mode requests are attributed to slices by intended send time.
	CorrectedHistogram string  `json:"corrected_histogram,omitempty"`
	CorrectedP50MS     float64 `json:"corrected_p50_ms,omitempty"`
	CorrectedP99MS     float64 `json:"corrected_p99_ms,omitempty"`
	CorrectedMaxMS     float64 `json:"corrected_max_ms,omitempty"`
	Late               int64   `json:"late,omitempty"`
}

// PoolUse describes the credential pool a step drew from.
type PoolUse struct {
	File    string `json:"file"` // pool path as given ("-" for stdin)
	Kind    string `json:"kind"` // from the pool header, e.g. "refresh_token"
	Mode    string `json:"mode"` // reuse | consume | chain
	Size    int    `json:"size"` // credentials in the pool
	Used    int64  `json:"used"` // credentials taken (consume) or chains seeded (chain)
	Minted  string `json:"minted,omitempty"`
	Expires string `json:"expires,omitempty"`
}

// Driver describes the load generator's own cost during the measured window.
type Driver struct {
	CPUS       float64 `json:"cpu_s"`      // user+system CPU seconds of the loadstep process
	CPUPct     float64 `json:"cpu_pct"`    // cpu_s / window seconds * 100 (100 = one full core)
	GOMAXPROCS int     `json:"gomaxprocs"` // cores loadstep may use
	// Limited is true when the driver, not the product, set the pace of the
	// step: DriverLimit decides it from cpu_s, loop_wait_s and loops. Such
	// a step is a lower bound and never a steady state.
	Limited bool `json:"limited"`
	// LimitedReason says, when Limited, which rule held and with what
	// figures; empty otherwise and in older records.
	LimitedReason string  `json:"limited_reason,omitempty"`
	HostCPUPct    float64 `json:"host_cpu_pct"` // whole-host busy CPU over the window, percent of all cores
	// HostStealPct is the share of all cores the hypervisor gave to other
	// guests during the window while this machine wanted them (steal in
	// /proc/stat), percent; it is part of host_cpu_pct. A contended host:
	// the window ran on a slower machine than its neighbours. Absent where
	// the kernel does not report steal, and in older records.
	HostStealPct *float64 `json:"host_steal_pct,omitempty"`
	// Loops is how many threads the driver can keep busy at once: its
	// event loops (engine epoll), else min(gomaxprocs, connections), a
	// goroutine per connection and at most gomaxprocs of them running.
	// 0 in older records.
	Loops int `json:"loops,omitempty"`
	// RunWaitS is how long the driver's threads were runnable but not
	// running (queued for a CPU) during the window, in seconds summed over
	// all its threads (two threads queued 1 s each = 2), from the kernel's
	// /proc/self/task/*/schedstat. Absent where the kernel does not report
	// it, and in older records.
	RunWaitS *float64 `json:"run_wait_s,omitempty"`
	// LoopWaitS is the part of run_wait_s of the loops threads that were
	// running or queued the longest, in seconds: the queueing of the
	// threads that carry the driver's loops. Present with run_wait_s.
	LoopWaitS *float64 `json:"loop_wait_s,omitempty"`
	// LoopBusyPct is how much of the window the driver's loops were
	// running or queued for a CPU, in percent of loops * window seconds:
	// 100 * (cpu_s + loop_wait_s) / (window_s * loops). It may exceed 100
	// (threads beyond the loops: the runtime, the garbage collector).
	// 0 in older records.
	LoopBusyPct float64 `json:"loop_busy_pct,omitempty"`
	// Engine is how loadstep put requests on the wire: "epoll" (its own
	// HTTP/1.1 client on event loops; the default for closed loop over http
	// on Linux), "raw" (the same client, a goroutine per connection) or
	// "nethttp" (Go's net/http). Empty in older records.
	Engine string `json:"engine,omitempty"`
}

// Host describes the machine loadstep ran on.
type Host struct {
	CPUs int `json:"cpus"` // logical CPUs
	// CPU is the processor, from /proc/cpuinfo: model name, vendor,
	// family, model, stepping and clock; absent in older records.
	CPU      string `json:"cpu,omitempty"`
	Kernel   string `json:"kernel"`   // kernel release
	Go       string `json:"go"`       // Go version loadstep was built with
	OS       string `json:"os"`       // GOOS/GOARCH
	Hostname string `json:"hostname"` // host name
}

// Sustain verdicts (Sustain.Verdict).
const (
	SustainYes       = "sustained"     // the product kept up with the schedule
	SustainNo        = "not_sustained" // its queue grew through the window and was there at its end
	SustainNotJudged = "not_judged"    // too few intervals, or not a rate-mode window
)

// Sustain is the sustain rule's verdict on a rate-mode window
// (docs/design-methodology.md, "Sustained or not"; steps.Sustain) and its figures.
type Sustain struct {
	Verdict string `json:"verdict"` // SustainYes | SustainNo | SustainNotJudged
	Rule    string `json:"rule"`    // the rule and its thresholds, in words
	// Intervals is how many of the window's intervals (with requests) the
	// rule read; WindowS the seconds they span.
	Intervals int     `json:"intervals"`
	WindowS   float64 `json:"window_s"`
	// GrowthMSPerS is the Theil-Sen slope of the intervals' corrected P50
	// against time, milliseconds per second (10 = the queue grew by 1% of
	// the time).
	GrowthMSPerS float64 `json:"growth_ms_per_s"`
	// EndBacklogMS is the last interval's corrected P50 above the lowest
	// interval's, milliseconds.
	EndBacklogMS float64 `json:"end_backlog_ms"`
	Why          string  `json:"why"` // the verdict in words, with its figures
}

// LateThresholdMS is how far behind its intended send time, in
// milliseconds, a rate-mode request must be sent to count in Step.Late. It
// sits above the driver's timer granularity (about 1 ms: Go's runtime waits
// for timers in epoll with millisecond resolution).
const LateThresholdMS = 2

// SteadyMaxErrorRate is the largest error rate a step may have and still be
// chosen as a ladder's steady state (0.01%).
const SteadyMaxErrorRate = 0.0001
