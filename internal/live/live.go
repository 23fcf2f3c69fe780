// Package live serves a running load step's figures as Prometheus metrics
// (loadstep --metrics-addr): requests and errors by phase and class, failed
// connection attempts, responses by status, a latency histogram, the
// completion rate and the phase.
//
// The request path never sees a Prometheus object. The engine aggregates
// per interval as it always does (load.LiveObserver); at each interval
// tick Metrics.Tick copies those figures under a lock, and a scrape turns
// the last copy into constant metrics (a prometheus.Collector), so every
// scrape shows one tick whole and costs the driver only while it is
// served. The registry is the Metrics' own, never the global default.
//
// The latency is a Prometheus histogram, not a summary of the step's
// HdrHistogram: buckets add up across agents (sum by (le) over loadstep
// processes, issue 17's segments) and over any range in PromQL, where the
// quantiles of a summary do neither. Its buckets run 1-2-5 from 100 µs to
// 60 s (the step histogram's ceiling), coarse by design: the exact
// percentiles are in the step record.
//
// No label holds anything from the command line (no URL, no product, no
// --label): phase, class, cause and code only.
package live

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/idpbench/idpbench/internal/load"
	"github.com/idpbench/idpbench/internal/schema"
)

// PhaseStarting is the phase before the engine's first tick: the server
// listens once the inputs are read, before the output files are opened
// and the target's pre-flight dial.
const PhaseStarting = "starting"

// phases are the values of the phase gauge's label, in order.
func phases() []string {
	return []string{PhaseStarting, load.LiveWarmup, load.LiveMeasured, load.LiveDrain, load.LiveDone}
}

// Metrics holds the last tick's figures and serves them.
type Metrics struct {
	created time.Time // the counters' created timestamp
	bounds  []time.Duration
	reg     *prometheus.Registry
	d       descs

	mu   sync.Mutex
	last load.LiveFigures
}

// descs are the metric descriptions.
type descs struct {
	requests, errors, connect, responses, latency, rate, corrected, phase, tick *prometheus.Desc
}

func newDescs() descs {
	name := func(n string) string { return "idpbench_loadstep_" + n }
	return descs{
		requests: prometheus.NewDesc(name("requests_total"),
			"Requests (iterations in iteration scenarios): phase warmup, completed before the measured window (not in the step record); phase measured, the window's as the step counts them, of the intervals that ended at least half an interval before the last tick; final once phase is done.",
			[]string{"phase"}, nil),
		errors: prometheus.NewDesc(name("errors_total"),
			"Failed requests of requests_total by the step's error classes (non2xx, socket, timeout, check, pool_exhausted).",
			[]string{"phase", "class"}, nil),
		connect: prometheus.NewDesc(name("connect_errors_total"),
			"Measured window: failed connection attempts by cause (refused, reset, dns, tls, timeout, other; attempts, not requests), and cause unsent: rate-mode requests given up unsent.",
			[]string{"cause"}, nil),
		responses: prometheus.NewDesc(name("responses_total"),
			"Measured window: HTTP responses by status code (the step's status_codes).",
			[]string{"code"}, nil),
		latency: prometheus.NewDesc(name("latency_seconds"),
			"Measured window: service time of the requests that got a complete response (the step's histogram, over the intervals requests_total{phase=\"measured\"} covers), bucketed to HdrHistogram's 3 significant digits.",
			nil, nil),
		rate: prometheus.NewDesc(name("interval_requests_per_second"),
			"Requests completed per second between the last two ticks (one interval apart), in any phase.",
			nil, nil),
		corrected: prometheus.NewDesc(name("corrected_latency_mean_seconds"),
			"Rate mode only: the mean latency from the intended send time of the requests answered between the last two ticks. Service times stay flat while a product falls behind its schedule; this grows tick after tick when it does (the step then records sustain.verdict not_sustained). Absent in a closed loop and without an answer since the tick before.",
			nil, nil),
		phase: prometheus.NewDesc(name("phase"),
			"1 for the step's current phase: starting, warmup, measured, drain (in-flight requests completing after the window) or done.",
			[]string{"phase"}, nil),
		tick: prometheus.NewDesc(name("last_tick_timestamp_seconds"),
			"When the figures were taken (Unix seconds); 0 before the first tick.",
			nil, nil),
	}
}

// New returns Metrics with its own registry. It holds no process or Go
// collector: reading /proc for them would cost each scrape more than the
// rest of it (BenchmarkScrape), and the driver's CPU is in the step record.
func New() *Metrics {
	m := &Metrics{created: time.Now(), bounds: latencyBounds(), reg: prometheus.NewRegistry(), d: newDescs(),
		last: load.LiveFigures{Phase: PhaseStarting}}
	m.reg.MustRegister(collector{m})
	return m
}

// LatencyBounds are the histogram's buckets (load.LiveObserver).
func (m *Metrics) LatencyBounds() []time.Duration { return slices.Clone(m.bounds) }

// latencyBounds are 1-2-5 from 100 µs to 60 s.
func latencyBounds() []time.Duration {
	var b []time.Duration
	for d := 100 * time.Microsecond; d < 10*time.Second; d *= 10 {
		b = append(b, d, 2*d, 5*d)
	}
	return append(b, 10*time.Second, 20*time.Second, 60*time.Second)
}

// Tick keeps f (load.LiveObserver).
func (m *Metrics) Tick(f load.LiveFigures) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last = f
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{MaxRequestsInFlight: 4})
}

// collector renders the last tick; it is unexported so that Metrics does
// not offer Describe and Collect to its users.
type collector struct{ m *Metrics }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	d := c.m.d
	for _, x := range []*prometheus.Desc{d.requests, d.errors, d.connect, d.responses, d.latency, d.rate, d.corrected, d.phase, d.tick} {
		ch <- x
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	m.mu.Lock()
	f := m.last
	m.mu.Unlock()
	d := m.d
	counter := func(desc *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(desc, prometheus.CounterValue, float64(v), m.created, labels...)
	}
	for _, p := range []struct {
		name string
		c    load.LiveCounts
	}{{load.LiveWarmup, f.Warmup}, {load.LiveMeasured, f.Window}} {
		counter(d.requests, p.c.Requests, p.name)
		for _, e := range errorClasses(p.c.Errors) {
			counter(d.errors, e.n, p.name, e.class)
		}
	}
	for _, e := range connectCauses(f.ConnectErrors) {
		counter(d.connect, e.n, e.class)
	}
	for code, n := range f.StatusCodes { // a map of the tick's own (load.LiveFigures)
		counter(d.responses, n, strconv.Itoa(code))
	}
	ch <- m.histogram(f.Latency)
	ch <- prometheus.MustNewConstMetric(d.rate, prometheus.GaugeValue, f.RatePerS)
	if !math.IsNaN(f.CorrectedMS) && f.CorrectedMS > 0 {
		ch <- prometheus.MustNewConstMetric(d.corrected, prometheus.GaugeValue, f.CorrectedMS/1000)
	}
	for _, p := range phases() {
		v := 0.0
		if p == f.Phase {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(d.phase, prometheus.GaugeValue, v, p)
	}
	var at float64
	if !f.At.IsZero() {
		at = float64(f.At.UnixNano()) / 1e9
	}
	ch <- prometheus.MustNewConstMetric(d.tick, prometheus.GaugeValue, at)
}

// histogram is the latency histogram of l, in seconds.
func (m *Metrics) histogram(l load.LiveLatency) prometheus.Metric {
	buckets := map[float64]uint64{}
	for i, b := range m.bounds {
		var n int64
		if i < len(l.Buckets) {
			n = l.Buckets[i]
		}
		buckets[b.Seconds()] = uint64(n)
	}
	return prometheus.MustNewConstHistogramWithCreatedTimestamp(m.d.latency, uint64(l.Count), l.Sum.Seconds(), buckets, m.created)
}

type classCount struct {
	class string
	n     int64
}

// errorClasses are the step's error classes, by their JSON names.
func errorClasses(e schema.Errors) []classCount {
	return []classCount{{"non2xx", e.Non2xx}, {"socket", e.Socket}, {"timeout", e.Timeout},
		{"check", e.Check}, {"pool_exhausted", e.PoolExhausted}}
}

// connectCauses are the step's connect_errors, by their JSON names.
func connectCauses(c schema.ConnectErrors) []classCount {
	return []classCount{{"refused", c.Refused}, {"reset", c.Reset}, {"dns", c.DNS}, {"tls", c.TLS},
		{"timeout", c.Timeout}, {"other", c.Other}, {"unsent", c.Unsent}}
}
