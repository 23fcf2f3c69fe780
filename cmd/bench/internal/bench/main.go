// Package bench is the bench command (cmd/bench): it measures loadstep against wrk on the same local targets in
// the same run: nginx serving a static discovery document, and the reference
// OpenID provider's discovery endpoint. The drivers take turns, their order
// rotated each round (A B C, B C A, ...), so drift of a shared, noisy machine
// hits all alike, and the figures quoted are medians over rounds, with ratios
// computed round by round.
//
// The drivers are wrk and loadstep on each engine of --engines (raw: a
// goroutine per connection; epoll: event loops), one row each. For each it
// reports the request rate, CPU seconds per request (user + system of the
// whole driver process, from the kernel's rusage), peak RSS and P50 latency,
// each the median over rounds, and for loadstep its ratios to wrk: the
// median over rounds of loadstep's figure divided by wrk's figure of the same
// round, with the per-round ratios it is the median of. That is not the ratio
// of the two medians beside it: when rounds swing (a noisy machine), the two
// differ, and the paired ratio is the one that cancels a round's drift.
//
// --raw FILE writes every run of every table as one JSON line (rawRecord):
// the figures each median and ratio is computed from, so a table can be
// checked or recomputed.
//
// Two more tables follow, on nginx: the rate mode's accuracy (loadstep --rate
// R: the rate nginx itself counted over the window, from its stub_status,
// against R; late sends; corrected and service-time latency; --rate-conns
// connections), and peak RSS at --rss-conns connections (wrk and loadstep on
// each engine closed loop, loadstep at --rate).
//
// --metrics-overhead runs one table instead (overhead.go): loadstep without
// and with --metrics-addr, scraped, on nginx, in turns.
//
// Usage (scripts/bench.sh builds the tools and finds the targets):
//
//	bench --loadstep bin/loadstep --refop ~/.cache/idpbench/bin/refop-v3.52.0-idpbench -c 16,128 --engines raw,epoll --raw bench.jsonl
package bench

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/nginxconf"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/stats"
)

// wrkReport is the wrk Lua script whose done() hook prints wrk's totals as
// one JSON line; written next to the run's scratch files unless --wrk-script
// names another.
//
//go:embed wrk-report.lua
var wrkReport []byte

type config struct {
	loadstep, wrk, nginx, refop, lua string
	conns                            []int
	duration                         time.Duration
	rounds                           int
	targets                          []string
	rate                             float64 // rate-accuracy row; 0 skips it
	rateConns                        int
	rssConns                         int           // RSS table; 0 skips it
	engines                          []string      // loadstep --engine values to compare
	raw                              string        // JSON lines of every run; "" = none
	metricsOverhead                  bool          // only the --metrics-addr overhead table
	metricsScrape                    time.Duration // its scrape interval
	output                           string        // the tables, written once all ran; "-" = stdout
	version                          bool
}

const usageHead = `Usage: bench [FLAGS]

Runs loadstep and wrk in turns against local targets (nginx serving a static
discovery document; the reference OP's discovery endpoint) and writes Markdown
tables: request rates, CPU per request, P50 and peak RSS, each the median over
rounds, with loadstep's ratios to wrk, each the median of per-round ratios.
scripts/bench.sh installs wrk and nginx, builds the tools and finds the targets.

Flags:
`

const usageTail = `
The tables are written once every run is done, to -o FILE (atomically) or to
stdout: a failure leaves nothing written. The drivers and targets are checked
before anything runs.

Exit codes: 0 ok, 1 a driver or target failed, 2 usage error, 130 interrupted.

Example:
  scripts/bench.sh -c 16,128 --duration 5s --rounds 3 --raw results/bench/bench.jsonl -o results/bench/bench.md
`

// Run is the bench command: it parses args, runs the tables and returns the
// exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c config
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.loadstep, "loadstep", "bin/loadstep", "loadstep binary")
	fs.StringVar(&c.wrk, "wrk", "wrk", "wrk binary (Debian package wrk)")
	fs.StringVar(&c.nginx, "nginx", "nginx", "nginx binary (Debian package nginx-light)")
	fs.StringVar(&c.refop, "refop", "", "reference OP binary (required when --targets names refop)")
	fs.StringVar(&c.lua, "wrk-script", "", "wrk Lua script that prints JSON totals (default: the built-in one)")
	fs.IntSliceVarP(&c.conns, "connections", "c", []int{16, 128}, "connection counts to compare")
	fs.DurationVar(&c.duration, "duration", 5*time.Second, "length of each driver run")
	fs.IntVar(&c.rounds, "rounds", 3, "A/B rounds per target and connection count (medians are quoted)")
	fs.StringSliceVar(&c.targets, "targets", []string{"nginx", "refop"}, "targets to run: nginx, refop")
	fs.Float64Var(&c.rate, "rate", 10000, "rate-accuracy table on nginx: loadstep --rate in requests/s (0 = skip)")
	fs.IntVar(&c.rateConns, "rate-conns", 16, "connections for the rate-accuracy table")
	fs.IntVar(&c.rssConns, "rss-conns", 1000, "RSS table on nginx: connections (0 = skip)")
	fs.StringSliceVar(&c.engines, "engines", []string{"raw", "epoll"}, "loadstep engines to compare with wrk, a row each (raw, epoll, nethttp)")
	fs.StringVar(&c.raw, "raw", "", "also write every run's figures (every round, every driver, every table) as JSON lines to `FILE`, atomically; default none")
	fs.BoolVar(&c.metricsOverhead, "metrics-overhead", false, "instead of the tables above: loadstep's CPU per request with --metrics-addr (scraped every --metrics-scrape) against without, on nginx, at each -c and engine of --engines, the two interleaved within each round")
	fs.DurationVar(&c.metricsScrape, "metrics-scrape", time.Second, "with --metrics-overhead: how often the --metrics-addr arm is scraped")
	fs.StringVarP(&c.output, "output", "o", "-", "write the tables to `FILE`, atomically, once every run is done; - = stdout (also only at the end)")
	fs.BoolVar(&c.version, "version", false, "print the version and exit")
	if code, done := (cli.Help{Tool: "bench", Head: usageHead, Tail: usageTail}).Parse(fs, args, &c.version, stdout, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		return cli.Fail(stderr, "bench", cli.Usagef("unexpected argument %q (bench takes flags only)", fs.Arg(0)))
	}
	if err := c.validate(); err != nil {
		return cli.Fail(stderr, "bench", err)
	}
	if err := c.check(exec.LookPath); err != nil {
		return cli.Fail(stderr, "bench", err)
	}
	var tables bytes.Buffer
	if err := benchRaw(ctx, c, args, &tables, stderr); err != nil {
		return cli.Fail(stderr, "bench", err)
	}
	return cli.Fail(stderr, "bench", writeTables(c.output, tables.Bytes(), stdout))
}

// writeTables writes the finished tables to path ("-": stdout), atomically.
func writeTables(path string, tables []byte, stdout io.Writer) error {
	f, err := atomicfile.Create(path, 0o644, stdout)
	if err != nil {
		return err
	}
	if _, err := f.Write(tables); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// check finds every program the tables run (lookPath: exec.LookPath)
// before any runs: a missing wrk must not cost the minutes before it.
func (c config) check(lookPath func(string) (string, error)) error {
	need := map[string]string{"--loadstep": c.loadstep}
	if !c.metricsOverhead {
		need["--wrk"] = c.wrk
	}
	if c.metricsOverhead || slices.Contains(c.targets, "nginx") {
		need["--nginx"] = c.nginx
	}
	if slices.Contains(c.targets, "refop") && !c.metricsOverhead {
		if c.refop == "" {
			return cli.Usagef("--refop: needed for the refop target (or --targets nginx)")
		}
		need["--refop"] = c.refop
	}
	for _, flag := range slices.Sorted(maps.Keys(need)) {
		if _, err := lookPath(need[flag]); err != nil {
			return fmt.Errorf("%s %s: %w", flag, need[flag], err)
		}
	}
	return nil
}

func (c config) validate() error {
	switch {
	case c.rounds < 1:
		return cli.Usagef("--rounds: want at least 1, got %d", c.rounds)
	case c.duration < time.Second || c.duration%time.Second != 0:
		return cli.Usagef("--duration: want whole seconds, at least 1s (wrk's -d), got %s", c.duration)
	case c.raw == "-":
		return cli.Usagef("--raw: want a file; stdout carries the markdown tables")
	case c.metricsOverhead && c.metricsScrape <= 0:
		return cli.Usagef("--metrics-scrape: must be positive, got %s", c.metricsScrape)
	}
	for _, n := range c.conns {
		if n < 1 {
			return cli.Usagef("--connections: want counts of at least 1, got %d", n)
		}
	}
	for _, t := range c.targets {
		if t != "nginx" && t != "refop" {
			return cli.Usagef("--targets: unknown target %q (want nginx or refop)", t)
		}
	}
	return nil
}

// benchRaw runs benchAll with c.raw open, committed only when all of it ran.
func benchRaw(ctx context.Context, c config, args []string, stdout, stderr io.Writer) error {
	bench := benchAll
	if c.metricsOverhead {
		bench = benchOverhead
	}
	if c.raw == "" {
		return bench(ctx, c, nil, stdout, stderr)
	}
	f, err := atomicfile.Create(c.raw, 0o644, stdout)
	if err != nil {
		return err
	}
	raw := &rawLog{enc: json.NewEncoder(f)}
	host, _ := os.Hostname()
	err = raw.enc.Encode(runRecord{Table: "run", Args: args, Start: time.Now().UTC(), Hostname: host,
		NumCPU: runtime.NumCPU(), Rounds: c.rounds, DurationS: c.duration.Seconds(), LoadAvg1: loadAvg1()})
	if err == nil {
		err = bench(ctx, c, raw, stdout, stderr)
	}
	if err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// runRecord is the first line of --raw: how the run was made.
type runRecord struct {
	Table     string    `json:"table"` // "run"
	Args      []string  `json:"args"`  // bench's arguments
	Start     time.Time `json:"start"`
	Hostname  string    `json:"hostname"`
	NumCPU    int       `json:"num_cpu"`
	Rounds    int       `json:"rounds"`
	DurationS float64   `json:"duration_s"`           // length of each driver run, seconds
	LoadAvg1  *float64  `json:"loadavg_1m,omitempty"` // host 1-minute load average at the start
}

// rawRecord is one driver run, a line of --raw.
type rawRecord struct {
	Table  string `json:"table"`           // compare (the main table) | rate | rss
	Target string `json:"target"`          // nginx | refop
	Conns  int    `json:"c"`               // connections
	Round  int    `json:"round,omitempty"` // 1-based; compare and rate tables
	// Turn is the run's place in its round (1 = first): the order rotates
	// round by round.
	Turn        int       `json:"turn,omitempty"`
	Driver      string    `json:"driver"`           // the row: wrk | loadstep ENGINE | loadstep --rate R
	Engine      string    `json:"engine,omitempty"` // loadstep: the engine that ran (driver.engine)
	Start       time.Time `json:"start"`
	LoadAvg1    *float64  `json:"loadavg_1m,omitempty"` // host 1-minute load average before the run
	Requests    int64     `json:"requests"`
	Errors      int64     `json:"errors"`
	Seconds     float64   `json:"seconds"`        // wall seconds the driver measured
	ReqPerS     float64   `json:"req_per_s"`      // requests / seconds
	CPUS        float64   `json:"cpu_s"`          // user+system CPU seconds of the driver process
	CPUUSPerReq float64   `json:"cpu_us_per_req"` // cpu_s / requests, microseconds
	RSSBytes    int64     `json:"rss_bytes"`      // peak RSS of the driver process
	P50MS       float64   `json:"p50_ms"`         // the driver's P50 latency, milliseconds
	Rate        *rateRaw  `json:"rate,omitempty"` // rate table only
	// Scrapes is how many scrapes of loadstep's --metrics-addr succeeded
	// during the run (metrics-overhead table, that arm only).
	Scrapes int `json:"scrapes,omitempty"`
}

// rateRaw holds the rate table's figures of one round.
type rateRaw struct {
	RateRPS         float64 `json:"rate_rps"`          // loadstep --rate
	NginxCountedRPS float64 `json:"nginx_counted_rps"` // requests nginx counted over the window / window seconds
	Late            int64   `json:"late"`              // loadstep's late sends
	LateMaxMS       float64 `json:"late_max_ms"`
	CorrectedP50MS  float64 `json:"corrected_p50_ms"`
	CorrectedP99MS  float64 `json:"corrected_p99_ms"`
	ServiceP99MS    float64 `json:"service_p99_ms"`
}

// runLogger is handed every run of a table (rawLog: to --raw).
type runLogger interface {
	write(base rawRecord, m measurement) error
}

// rawLog writes rawRecords as JSON lines; a nil rawLog writes nothing.
type rawLog struct{ enc *json.Encoder }

func (l *rawLog) write(base rawRecord, m measurement) error {
	if l == nil {
		return nil
	}
	r := base
	r.Scrapes = m.scrapes
	r.Requests, r.Errors, r.Seconds, r.ReqPerS = m.requests, m.errors, m.seconds, m.rate()
	r.CPUS, r.CPUUSPerReq, r.RSSBytes, r.P50MS = m.cpuS, m.cpuPerReqUS(), m.rssBytes, m.p50MS
	r.Start, r.LoadAvg1 = m.start, m.loadAvg1
	if m.step != nil {
		r.Engine = m.step.Driver.Engine
	}
	if err := l.enc.Encode(r); err != nil {
		return fmt.Errorf("writing --raw: %w", err)
	}
	return nil
}

// loadAvg1 is the host's 1-minute load average, nil where /proc/loadavg
// cannot be read.
func loadAvg1() *float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return nil
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return nil
	}
	return &v
}

// measured runs a driver, stamping the measurement with its start time and
// the load average before it.
func measured(run func() (measurement, error)) (measurement, error) {
	start, load := time.Now().UTC(), loadAvg1()
	m, err := run()
	m.start, m.loadAvg1 = start, load
	return m, err
}

// measurement is one driver run.
type measurement struct {
	requests, errors int64
	seconds          float64 // wall seconds the driver measured
	cpuS             float64 // user+system CPU seconds of the driver process
	rssBytes         int64
	p50MS            float64
	step             *schema.Step // loadstep runs only
	start            time.Time    // when the run began
	loadAvg1         *float64     // host load average before it; nil when unknown
	scrapes          int          // successful scrapes of loadstep's --metrics-addr
}

func (m measurement) rate() float64        { return float64(m.requests) / m.seconds }
func (m measurement) cpuPerReqUS() float64 { return m.cpuS / float64(m.requests) * 1e6 }

func benchAll(ctx context.Context, c config, raw *rawLog, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "idpbench-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if c.lua == "" {
		c.lua = filepath.Join(dir, "wrk-report.lua")
		if err := os.WriteFile(c.lua, wrkReport, 0o644); err != nil {
			return err
		}
	}
	writeCompareHeader(stdout, c.rounds)
	var extra bytes.Buffer // tables printed after the main one
	for _, t := range c.targets {
		url, stopTarget, err := startTarget(ctx, c, t, dir)
		if err != nil {
			return err
		}
		for _, n := range c.conns {
			rows, err := compare(drivers(ctx, c, url, n, dir), c.rounds, rawRecord{Table: "compare", Target: t, Conns: n},
				raw, fmt.Sprintf("%s c=%d", url, n), stderr)
			if err != nil {
				stopTarget()
				return fmt.Errorf("%s c=%d: %w", t, n, err)
			}
			for _, row := range rows {
				fmt.Fprintf(stdout, "| %s | %d | %s |\n", t, n, row)
			}
		}
		if t == "nginx" {
			err = nginxExtras(ctx, c, url, dir, raw, &extra, stderr)
		}
		stopTarget()
		if err != nil {
			return err
		}
	}
	_, err = io.Copy(stdout, &extra)
	return err
}

// writeCompareHeader writes the main table's preamble and header: which
// figure is a median, and which ratio the ratio columns hold.
func writeCompareHeader(w io.Writer, rounds int) {
	fmt.Fprintf(w, "Each figure is the median over %d rounds. A ratio is the median over rounds of loadstep's figure "+
		"divided by wrk's in the same round; the \"by round\" columns list those per-round ratios in round order. "+
		"It is not the ratio of the two medians: that differs when rounds swing.\n\n", rounds)
	fmt.Fprintf(w, "| target | c | driver | req/s (median) | req/s ÷ wrk's (median of per-round ratios) | req/s ÷ wrk's by round "+
		"| CPU µs/req (median) | CPU ÷ wrk's (median of per-round ratios) | CPU ÷ wrk's by round | P50 ms (median) | RSS MB (median) |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|\n")
}

// nginxExtras writes the rate-accuracy and RSS tables.
func nginxExtras(ctx context.Context, c config, url, dir string, raw *rawLog, w, stderr io.Writer) error {
	if c.rate > 0 {
		if err := rateTable(ctx, c, url, dir, raw, w, stderr); err != nil {
			return fmt.Errorf("rate table: %w", err)
		}
	}
	if c.rssConns > 0 {
		if err := rssTable(ctx, c, url, dir, raw, w, stderr); err != nil {
			return fmt.Errorf("RSS table: %w", err)
		}
	}
	return nil
}

// rateTable runs loadstep --rate c.rate without warmup, c.rounds times, and
// compares the rate with what nginx counted (stub_status) during the run,
// over the window. All requests due in the window are sent, so the count
// matches R*window unless some were lost; late and late_max_ms say how far
// behind schedule the sends were (the rate over any part of the window is
// off by at most late_max/window).
func rateTable(ctx context.Context, c config, url, dir string, raw *rawLog, w, stderr io.Writer) error {
	fmt.Fprintf(w, "\nRate mode on nginx (loadstep --rate, c=%d, no warmup):\n\n", c.rateConns)
	fmt.Fprintf(w, "| round | rate req/s | nginx counted req/s | ratio | late %% | late max ms | corrected P50 ms | corrected P99 ms | service P99 ms | CPU µs/req | RSS MB |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	status := strings.TrimSuffix(url, "/.well-known/openid-configuration") + "/nginx_status"
	for r := 1; r <= c.rounds; r++ {
		fmt.Fprintf(stderr, "bench: %s --rate %g c=%d round %d/%d: loadstep\n", url, c.rate, c.rateConns, r, c.rounds)
		before, err := nginxRequests(ctx, status)
		if err != nil {
			return err
		}
		m, err := measured(func() (measurement, error) {
			return runLoadstep(ctx, c, url, c.rateConns, dir, "--rate", strconv.FormatFloat(c.rate, 'f', -1, 64))
		})
		if err != nil {
			return err
		}
		after, err := nginxRequests(ctx, status)
		if err != nil {
			return err
		}
		s := m.step
		if s.CorrectedLatencyMS == nil || s.Late == nil || s.LateMaxMS == nil {
			return fmt.Errorf("loadstep --rate wrote no corrected latency")
		}
		counted := float64(after-before-1) / m.seconds // less the status request itself
		base := rawRecord{Table: "rate", Target: "nginx", Conns: c.rateConns, Round: r, Turn: 1,
			Driver: fmt.Sprintf("loadstep --rate %g", c.rate), Rate: &rateRaw{RateRPS: c.rate, NginxCountedRPS: counted,
				Late: *s.Late, LateMaxMS: *s.LateMaxMS, CorrectedP50MS: s.CorrectedLatencyMS.P50,
				CorrectedP99MS: s.CorrectedLatencyMS.P99, ServiceP99MS: s.LatencyMS.P99}}
		if err := raw.write(base, m); err != nil {
			return err
		}
		fmt.Fprintf(w, "| %d | %.0f | %.1f | %.4f | %.3f | %.2f | %.3f | %.3f | %.3f | %.1f | %.1f |\n",
			r, c.rate, counted, counted/c.rate, 100*float64(*s.Late)/float64(s.Requests), *s.LateMaxMS,
			s.CorrectedLatencyMS.P50, s.CorrectedLatencyMS.P99, s.LatencyMS.P99, m.cpuPerReqUS(), float64(m.rssBytes)/(1<<20))
	}
	return nil
}

// rssTable runs each driver once at c.rssConns connections and reports its
// peak RSS.
func rssTable(ctx context.Context, c config, url, dir string, raw *rawLog, w, stderr io.Writer) error {
	n := c.rssConns
	fmt.Fprintf(w, "\nPeak RSS at c=%d on nginx:\n\n| driver | req/s | CPU µs/req | RSS MB |\n|---|---|---|---|\n", n)
	rate := strconv.FormatFloat(max(c.rate, 1000), 'f', -1, 64)
	runs := []driver{
		{"loadstep --rate " + rate, func() (measurement, error) { return runLoadstep(ctx, c, url, n, dir, "--rate", rate) }},
	}
	runs = append(drivers(ctx, c, url, n, dir), runs...)
	for i, r := range runs {
		fmt.Fprintf(stderr, "bench: %s c=%d: %s\n", url, n, r.name)
		m, err := measured(r.run)
		if err != nil {
			return err
		}
		if err := raw.write(rawRecord{Table: "rss", Target: "nginx", Conns: n, Turn: i + 1, Driver: r.name}, m); err != nil {
			return err
		}
		if m.errors > 0 || m.requests == 0 {
			return fmt.Errorf("%s: %d requests, %d errors", r.name, m.requests, m.errors)
		}
		fmt.Fprintf(w, "| %s | %.0f | %.1f | %.1f |\n", r.name, m.rate(), m.cpuPerReqUS(), float64(m.rssBytes)/(1<<20))
	}
	return nil
}

// nginxRequests reads the total request count from nginx's stub_status.
func nginxRequests(ctx context.Context, url string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	// "Active connections: 1 \nserver accepts handled requests\n 10 10 42 \n..."
	lines := strings.Split(string(b), "\n")
	if len(lines) < 3 {
		return 0, fmt.Errorf("nginx status %q", b)
	}
	f := strings.Fields(lines[2])
	if len(f) != 3 {
		return 0, fmt.Errorf("nginx status %q", b)
	}
	return strconv.ParseInt(f[2], 10, 64)
}

// driver is one row of the comparison.
type driver struct {
	name string
	run  func() (measurement, error)
}

// drivers are wrk and loadstep on each of c.engines, at n connections.
func drivers(ctx context.Context, c config, url string, n int, dir string) []driver {
	ds := []driver{{"wrk", func() (measurement, error) { return runWrk(ctx, c, url, n) }}}
	for _, eng := range c.engines {
		ds = append(ds, driver{"loadstep " + eng, func() (measurement, error) {
			m, err := runLoadstep(ctx, c, url, n, dir, "--engine", eng)
			if err == nil && m.step.Driver.Engine != eng {
				err = fmt.Errorf("loadstep --engine %s ran engine %q", eng, m.step.Driver.Engine)
			}
			return m, err
		}})
	}
	return ds
}

// compare runs the drivers rounds times, rotating their order each round
// (so drift of the machine hits all alike), writes every run to raw (base
// filled in with the round, turn and driver), and returns a table row per
// driver: medians of each figure and, for loadstep (every driver after the
// first, wrk), the median of its per-round ratios to wrk and those ratios.
func compare(ds []driver, rounds int, base rawRecord, raw runLogger, label string, stderr io.Writer) ([]string, error) {
	ms := make([][]measurement, len(ds))
	for r := 0; r < rounds; r++ {
		for k := range ds {
			d := (k + r) % len(ds)
			fmt.Fprintf(stderr, "bench: %s round %d/%d: %s\n", label, r+1, rounds, ds[d].name)
			m, err := measured(ds[d].run)
			if err != nil {
				return nil, err
			}
			rec := base
			rec.Round, rec.Turn, rec.Driver = r+1, k+1, ds[d].name
			if err := raw.write(rec, m); err != nil {
				return nil, err
			}
			if m.errors > 0 || m.requests == 0 {
				return nil, fmt.Errorf("%s: %d requests, %d errors", ds[d].name, m.requests, m.errors)
			}
			ms[d] = append(ms[d], m)
		}
	}
	rate := measurement.rate
	cpu := measurement.cpuPerReqUS
	p50 := func(m measurement) float64 { return m.p50MS }
	rss := func(m measurement) float64 { return float64(m.rssBytes) / (1 << 20) }
	rows := make([]string, len(ds))
	for k, d := range ds {
		rateRatio, rateRounds, cpuRatio, cpuRounds := "—", "—", "—", "—"
		if k > 0 {
			rateRatio, rateRounds = ratioCells(pairedRatios(ms[k], ms[0], rate))
			cpuRatio, cpuRounds = ratioCells(pairedRatios(ms[k], ms[0], cpu))
		}
		rows[k] = fmt.Sprintf("%s | %.0f | %s | %s | %.1f | %s | %s | %.3f | %.1f",
			d.name, medianOf(ms[k], rate), rateRatio, rateRounds, medianOf(ms[k], cpu), cpuRatio, cpuRounds,
			medianOf(ms[k], p50), medianOf(ms[k], rss))
	}
	return rows, nil
}

// medianOf is the median of g over the runs.
func medianOf(ms []measurement, g func(measurement) float64) float64 {
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = g(m)
	}
	return median(v)
}

// pairedRatios are g(ls[i]) / g(wrk[i]) round by round: each of loadstep's
// runs against wrk's run of the same round.
func pairedRatios(ls, wrk []measurement, g func(measurement) float64) []float64 {
	v := make([]float64, len(ls))
	for i := range ls {
		v[i] = g(ls[i]) / g(wrk[i])
	}
	return v
}

// ratioCells formats the median of the per-round ratios and the ratios
// themselves, in round order.
func ratioCells(v []float64) (med, rounds string) {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.2f", median(v)), strings.Join(s, " ")
}

func runWrk(ctx context.Context, c config, url string, n int) (measurement, error) {
	threads := min(2, n)
	secs := strconv.Itoa(int(c.duration.Seconds()))
	out, ru, err := runMeasured(ctx, c.wrk, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(n),
		"-d", secs+"s", "--latency", "-s", c.lua, url)
	if err != nil {
		return measurement{}, err
	}
	// wrk prints its human report first; the Lua done() hook prints the last line as JSON.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var w struct {
		Requests   int64 `json:"requests"`
		DurationUS int64 `json:"duration_us"`
		Errors     int64 `json:"errors"`
		P50US      int64 `json:"p50_us"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &w); err != nil {
		return measurement{}, fmt.Errorf("wrk: reading JSON from %s: %w", c.lua, err)
	}
	return measurement{requests: w.Requests, errors: w.Errors, seconds: float64(w.DurationUS) / 1e6,
		cpuS: cpuSeconds(ru), rssBytes: ru.Maxrss * 1024, p50MS: float64(w.P50US) / 1e3}, nil
}

func runLoadstep(ctx context.Context, c config, url string, n int, dir string, extra ...string) (measurement, error) {
	out := filepath.Join(dir, fmt.Sprintf("ls-c%d.json", n))
	args := append([]string{"--url", url, "--scenario", "discovery",
		"-c", strconv.Itoa(n), "--warmup", "0s", "--duration", c.duration.String(), "-o", out}, extra...)
	_, ru, err := runMeasured(ctx, c.loadstep, args...)
	if err != nil {
		return measurement{}, err
	}
	f, err := os.Open(out)
	if err != nil {
		return measurement{}, err
	}
	defer f.Close()
	s, err := schema.DecodeStep(f, out)
	if err != nil {
		return measurement{}, err
	}
	return measurement{requests: s.Requests, errors: s.Errors.Total(),
		seconds: s.End.Sub(s.Start).Seconds(), cpuS: cpuSeconds(ru),
		rssBytes: ru.Maxrss * 1024, p50MS: s.LatencyMS.P50, step: s}, nil
}

// runMeasured runs a driver and returns its stdout and the kernel's rusage
// for it (the whole process: user+system CPU and peak RSS).
func runMeasured(ctx context.Context, name string, args ...string) ([]byte, *syscall.Rusage, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w: %s", filepath.Base(name), err, strings.TrimSpace(errb.String()))
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		return nil, nil, fmt.Errorf("%s: no rusage", name)
	}
	return out.Bytes(), ru, nil
}

func cpuSeconds(ru *syscall.Rusage) float64 {
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime)).Seconds()
}

// median of v (0 for none); v is not changed.
func median(v []float64) float64 {
	m, _ := stats.Median(v)
	return m
}

// startTarget starts a local target and returns the discovery URL to load.
func startTarget(ctx context.Context, c config, name, dir string) (string, func(), error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	var cmd *exec.Cmd
	var url string
	switch name {
	case "nginx":
		root := filepath.Join(dir, "nginx")
		if err := writeNginx(root, port); err != nil {
			return "", nil, err
		}
		cmd = exec.CommandContext(ctx, c.nginx, "-p", root, "-c", filepath.Join(root, "nginx.conf"), "-e", filepath.Join(root, "error.log"))
		url = fmt.Sprintf("http://127.0.0.1:%d/.well-known/openid-configuration", port)
	case "refop":
		if c.refop == "" {
			return "", nil, cli.Usagef("--refop: needed for the refop target")
		}
		cmd = exec.CommandContext(ctx, c.refop)
		cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
		url = fmt.Sprintf("http://localhost:%d/.well-known/openid-configuration", port)
	default:
		return "", nil, cli.Usagef("--targets: unknown target %q (want nginx or refop)", name)
	}
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return "", nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return "", nil, fmt.Errorf("starting %s: %w", name, err)
	}
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		log.Close()
	}
	if err := waitReady(ctx, url, 30*time.Second); err != nil {
		stop()
		return "", nil, fmt.Errorf("%s: %w (log: %s)", name, err, log.Name())
	}
	return url, stop, nil
}

func writeNginx(root string, port int) error {
	return nginxconf.Write(root, nginxconf.Config{Port: port, StubStatus: true, WorkerConnections: 20000, RlimitNofile: 40000,
		Discovery: `{"issuer":"http://127.0.0.1/","token_endpoint":"http://127.0.0.1/oauth2/token","jwks_uri":"http://127.0.0.1/.well-known/jwks.json","response_types_supported":["code"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}`})
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitReady(ctx context.Context, url string, limit time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("not ready at %s after %s", url, limit)
}
