package steps

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/idpbench/idpbench/internal/schema"
)

// Merge combines the step records of several loadstep agents that ran the
// same step against the same target into one record, exactly:
//
//   - histograms (overall, corrected, and per interval by index) are merged
//     bucket by bucket, which requires the shared geometry; latency_ms and the
//     interval percentiles are recomputed from the merged histograms;
//   - requests, ok, errors, status codes, connections and rate are summed;
//     error_rate is recomputed as failed / requests;
//   - qps is the sum of the agents' qps. That is only true when the agents
//     measured the same window, so every agent's start and end must lie within
//     one interval (interval_s, 1 s when unset) of the first agent's: start
//     the agents at the same moment with the same loadstep --warmup and
//     --duration. A window outside that is an error naming the file;
//   - product, product_version, scenario, check, target_url, interval_s and
//     latency_model must match (agents judged by different success rules
//     did not count the same thing);
//   - the merged window spans the earliest start to the latest end;
//   - driver cpu_s, cpu_pct and gomaxprocs are summed, limited is true when
//     any agent was limited, host_cpu_pct and host_steal_pct are the highest;
//   - status is complete only when every agent completed (error wins over
//     interrupted); labels keep the keys all agents agree on; agents is the
//     sum of the agents' counts (0 counts as 1);
//   - rate mode (all agents or none): late and every interval's late are
//     summed, late_max_ms is the largest, the corrected histograms (overall
//     and per interval) are merged like the others;
//   - warmup_s is the longest; an adaptive warmup's warmup_rule is kept
//     when every agent ran by the same rule, warmup_stable when every
//     agent says the same, and warmup_qps, one agent's curve, is dropped.
//     Adaptive agents decide their window's start each on its own, so
//     their windows match (see above) only when they settled within an
//     interval of each other;
//   - iteration steps: count_unit and request_order must match;
//     http_requests is summed, and requests_by_name name by name (counts
//     and status codes summed, histograms merged, latency_ms recomputed);
//   - segments (loadstep --segment I/N): records that carry one must be
//     one whole (see checkSegments): all segmented, the same N, every
//     index 0..N-1 exactly once, the same whole-step connections and
//     rate, which their shares add up to. The merged record has no
//     segment; its connections and rate_rps are the whole step's;
//   - start_skew_ms is the spread of the agents' actual starts
//     (started_at, else start); start_at is kept when every agent was
//     given the same.
func Merge(steps []File) (*schema.Step, error) {
	if len(steps) == 0 {
		return nil, errors.New("no step records to merge")
	}
	first := steps[0]
	for _, sf := range steps[1:] {
		if err := compatible(first, sf); err != nil {
			return nil, err
		}
	}
	if err := checkSegments(steps); err != nil {
		return nil, err
	}
	out := mergeScalars(steps)
	mergeStarts(out, steps)
	for _, merge := range []func(*schema.Step, []File) error{mergeHistograms, mergeIntervals, mergeNamed} {
		if err := merge(out, steps); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// compatible checks that sf ran the same step as first, in the same window.
func compatible(first, sf File) error {
	a, b := first.Step, sf.Step
	for _, f := range []struct{ name, a, b string }{
		{"product", a.Product, b.Product},
		{"product_version", a.ProductVersion, b.ProductVersion},
		{"scenario", a.Scenario, b.Scenario},
		{"check", a.Check, b.Check},
		{"target_url", a.TargetURL, b.TargetURL},
		{"latency_model", a.LatencyModel, b.LatencyModel},
		{"interval_s", fmt.Sprint(a.IntervalS), fmt.Sprint(b.IntervalS)},
		{"count_unit", a.CountUnit, b.CountUnit},
		{"request_order", strings.Join(a.RequestOrder, ","), strings.Join(b.RequestOrder, ",")},
	} {
		if f.a != f.b {
			return fmt.Errorf("merging %s: %s %q differs from %q in %s", sf.Path, f.name, f.b, f.a, first.Path)
		}
	}
	tol := windowTolerance(a)
	if absDur(b.Start.Sub(a.Start)) > tol || absDur(b.End.Sub(a.End)) > tol {
		return fmt.Errorf("merging %s: measured window %s to %s does not match %s's %s to %s within one interval (%s); "+
			"agents must measure the same window: start them at the same moment with the same loadstep --warmup and --duration", sf.Path,
			b.Start.Format(time.RFC3339Nano), b.End.Format(time.RFC3339Nano), first.Path,
			a.Start.Format(time.RFC3339Nano), a.End.Format(time.RFC3339Nano), tol)
	}
	return nil
}

func windowTolerance(s *schema.Step) time.Duration {
	if s.IntervalS <= 0 {
		return time.Second
	}
	return time.Duration(s.IntervalS * float64(time.Second))
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// mergeScalars sums and combines everything but the histograms.
func mergeScalars(steps []File) *schema.Step {
	first := steps[0].Step
	out := &schema.Step{
		Schema: schema.StepV1, Product: first.Product, ProductVersion: first.ProductVersion,
		Scenario: first.Scenario, Check: first.Check, TargetURL: first.TargetURL, IntervalS: first.IntervalS,
		LatencyModel: first.LatencyModel, Start: first.Start, End: first.End,
		StatusCodes: map[string]int64{}, Host: first.Host, Labels: commonLabels(steps),
		CountUnit: first.CountUnit, RequestOrder: first.RequestOrder,
	}
	var tools, hosts, errs []string
	statuses := map[string]bool{}
	for _, sf := range steps {
		s := sf.Step
		out.Connections += s.Connections
		out.RateRPS += s.RateRPS
		out.WarmupS = math.Max(out.WarmupS, s.WarmupS)
		out.DurationS = math.Max(out.DurationS, s.DurationS)
		out.TimeoutS = math.Max(out.TimeoutS, s.TimeoutS)
		if s.Start.Before(out.Start) {
			out.Start = s.Start
		}
		if s.End.After(out.End) {
			out.End = s.End
		}
		out.Requests += s.Requests
		out.OK += s.OK
		out.Errors = out.Errors.Add(s.Errors)
		for code, n := range s.StatusCodes {
			out.StatusCodes[code] += n
		}
		out.QPS += s.QPS
		out.HTTPRequests += s.HTTPRequests
		out.ConnectErrors = out.ConnectErrors.Add(s.ConnectErrors)
		out.UnreachableS = math.Max(out.UnreachableS, s.UnreachableS) // agents share one target
		if s.TargetLostAt != nil && (out.TargetLostAt == nil || s.TargetLostAt.Before(*out.TargetLostAt)) {
			out.TargetLostAt = s.TargetLostAt
		}
		mergeLate(out, s)
		out.Agents += max(s.Agents, 1)
		mergeDriver(&out.Driver, s.Driver)
		out.Pool = mergePool(out.Pool, s.Pool)
		tools = appendNew(tools, s.ToolVersion)
		hosts = appendNew(hosts, s.Host.Hostname)
		statuses[s.Status] = true
		if s.Error != "" {
			errs = append(errs, sf.Path+": "+s.Error)
		}
	}
	mergeWarmup(out, steps)
	out.ToolVersion = strings.Join(tools, ",")
	out.Host.Hostname = strings.Join(hosts, ",")
	out.Status = mergedStatus(statuses)
	out.Error = strings.Join(errs, "; ")
	if out.Requests > 0 {
		out.ErrorRate = float64(out.Errors.Total()) / float64(out.Requests)
	}
	return out
}

// mergeWarmup keeps the adaptive warmup's rule and verdict where every
// agent agrees on them.
func mergeWarmup(out *schema.Step, steps []File) {
	rule, stable := steps[0].Step.WarmupRule, steps[0].Step.WarmupStable
	for _, sf := range steps[1:] {
		s := sf.Step
		if rule != nil && (s.WarmupRule == nil || *s.WarmupRule != *rule) {
			rule = nil
		}
		if stable != nil && (s.WarmupStable == nil || *s.WarmupStable != *stable) {
			stable = nil
		}
	}
	if rule != nil {
		out.WarmupRule = new(*rule)
	}
	if stable != nil {
		out.WarmupStable = new(*stable)
	}
}

// mergeLate sums late and keeps the largest late_max_ms (rate mode; a
// record without them adds nothing: mergeHistograms rejects a mix).
func mergeLate(out, s *schema.Step) {
	if s.Late != nil {
		out.Late = new(deref(out.Late) + *s.Late)
	}
	if s.LateMaxMS != nil {
		out.LateMaxMS = new(math.Max(deref(out.LateMaxMS), *s.LateMaxMS))
	}
}

func deref[T int64 | float64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// mergeDriver adds agent s's driver to d: CPU, cores, loops and queue
// waits sum (run_wait_s and loop_wait_s over the agents that report them),
// loop_busy_pct is the agents' mean weighted by their loops, the host
// figure is the busiest agent's, and the step is driver-limited when any
// agent was, with the limited agents' reasons, " | " between them.
func mergeDriver(d *schema.Driver, s schema.Driver) {
	if loops := d.Loops + s.Loops; loops > 0 {
		d.LoopBusyPct = (d.LoopBusyPct*float64(d.Loops) + s.LoopBusyPct*float64(s.Loops)) / float64(loops)
	}
	d.CPUS += s.CPUS
	d.CPUPct += s.CPUPct
	d.GOMAXPROCS += s.GOMAXPROCS
	d.Loops += s.Loops
	if s.RunWaitS != nil {
		d.RunWaitS = new(deref(d.RunWaitS) + *s.RunWaitS)
	}
	if s.LoopWaitS != nil {
		d.LoopWaitS = new(deref(d.LoopWaitS) + *s.LoopWaitS)
	}
	d.Limited = d.Limited || s.Limited
	if s.LimitedReason != "" && !strings.Contains(d.LimitedReason, s.LimitedReason) {
		d.LimitedReason = strings.TrimPrefix(d.LimitedReason+" | "+s.LimitedReason, " | ")
	}
	d.HostCPUPct = math.Max(d.HostCPUPct, s.HostCPUPct)
	if s.HostStealPct != nil && (d.HostStealPct == nil || *s.HostStealPct > *d.HostStealPct) {
		d.HostStealPct = new(*s.HostStealPct)
	}
}

func mergePool(acc, p *schema.PoolUse) *schema.PoolUse {
	if p == nil {
		return acc
	}
	if acc == nil {
		c := *p
		return &c
	}
	acc.Size += p.Size
	acc.Used += p.Used
	if acc.File != p.File {
		acc.File = "(several)"
	}
	return acc
}

func mergedStatus(statuses map[string]bool) string {
	switch {
	case statuses[schema.StatusError]:
		return schema.StatusError
	case statuses[schema.StatusTargetLost]:
		return schema.StatusTargetLost
	case len(statuses) == 1 && statuses[schema.StatusComplete]:
		return schema.StatusComplete
	default:
		return schema.StatusInterrupted
	}
}

// commonLabels keeps the labels every agent has with the same value (an
// agent index label, for example, is dropped).
func commonLabels(steps []File) map[string]string {
	out := map[string]string{}
	for k, v := range steps[0].Step.Labels {
		if slices.IndexFunc(steps, func(sf File) bool { return sf.Step.Labels[k] != v }) < 0 {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// mergeHistograms merges the overall and the corrected histograms.
func mergeHistograms(out *schema.Step, steps []File) error {
	h, err := mergeField(steps, "histogram", func(s *schema.Step) string { return s.Histogram })
	if err != nil {
		return err
	}
	if out.Histogram, err = schema.EncodeHistogram(h); err != nil {
		return err
	}
	out.LatencyMS = schema.Summarize(h)
	corrected := 0
	for _, sf := range steps {
		if sf.Step.CorrectedHistogram != "" {
			corrected++
		}
	}
	switch {
	case corrected == 0:
		return nil
	case corrected < len(steps):
		return fmt.Errorf("merging: %d of %d step records have a corrected_histogram (rate mode); merge rate-mode agents only with each other",
			corrected, len(steps))
	}
	c, err := mergeField(steps, "corrected_histogram", func(s *schema.Step) string { return s.CorrectedHistogram })
	if err != nil {
		return err
	}
	if out.CorrectedHistogram, err = schema.EncodeHistogram(c); err != nil {
		return err
	}
	lat := schema.Summarize(c)
	out.CorrectedLatencyMS = &lat
	return nil
}

// mergeField merges one histogram field of every step into a new histogram.
func mergeField(steps []File, field string, get func(*schema.Step) string) (*hdrhistogram.Histogram, error) {
	acc := schema.NewHistogram()
	for _, sf := range steps {
		if err := mergeInto(acc, get(sf.Step), sf.Path, field); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

// mergeInto adds an encoded histogram to acc; "" is an empty histogram.
func mergeInto(acc *hdrhistogram.Histogram, encoded, path, field string) error {
	if encoded == "" {
		return nil
	}
	h, err := schema.DecodeHistogram(encoded)
	if err != nil {
		return fmt.Errorf("merging %s: %s: %w", path, field, err)
	}
	if !schema.SameGeometry(acc, h) {
		return fmt.Errorf("merging %s: %s: histogram geometry differs, an exact merge is impossible", path, field)
	}
	if dropped := acc.Merge(h); dropped != 0 {
		return fmt.Errorf("merging %s: %s: %d values could not be merged", path, field, dropped)
	}
	return nil
}

// mergeIntervals merges the per-interval slices by index.
func mergeIntervals(out *schema.Step, steps []File) error {
	n := 0
	for _, sf := range steps {
		n = max(n, len(sf.Step.Intervals))
	}
	for i := range n {
		iv, err := mergeInterval(steps, i)
		if err != nil {
			return err
		}
		out.Intervals = append(out.Intervals, iv)
	}
	return nil
}

func mergeInterval(steps []File, i int) (schema.Interval, error) {
	var out schema.Interval
	acc, corr := schema.NewHistogram(), schema.NewHistogram()
	seen, corrected := false, false
	for _, sf := range steps {
		if i >= len(sf.Step.Intervals) {
			continue
		}
		iv := sf.Step.Intervals[i]
		if !seen {
			out.TS, seen = iv.TS, true
		}
		out.LengthS = math.Max(out.LengthS, iv.LengthS)
		out.Requests += iv.Requests
		out.Errors += iv.Errors
		out.QPS += iv.QPS
		out.Late += iv.Late
		if err := mergeInto(acc, iv.Histogram, sf.Path, fmt.Sprintf("intervals[%d].histogram", i)); err != nil {
			return out, err
		}
		corrected = corrected || iv.CorrectedHistogram != ""
		if err := mergeInto(corr, iv.CorrectedHistogram, sf.Path, fmt.Sprintf("intervals[%d].corrected_histogram", i)); err != nil {
			return out, err
		}
	}
	enc, err := schema.EncodeHistogram(acc)
	if err != nil {
		return out, err
	}
	lat := schema.Summarize(acc)
	out.Histogram, out.P50MS, out.P99MS, out.MaxMS = enc, lat.P50, lat.P99, lat.Max
	if !corrected {
		return out, nil
	}
	if out.CorrectedHistogram, err = schema.EncodeHistogram(corr); err != nil {
		return out, err
	}
	cl := schema.Summarize(corr)
	out.CorrectedP50MS, out.CorrectedP99MS, out.CorrectedMaxMS = cl.P50, cl.P99, cl.Max
	return out, nil
}

// mergeNamed merges the named requests of iteration steps name by name.
func mergeNamed(out *schema.Step, steps []File) error {
	if out.CountUnit != schema.CountIterations {
		return nil
	}
	out.RequestsByName = map[string]schema.NamedRequests{}
	for _, name := range namedUnion(steps) {
		nr := schema.NamedRequests{StatusCodes: map[string]int64{}}
		acc := schema.NewHistogram()
		for _, sf := range steps {
			in, ok := sf.Step.RequestsByName[name]
			if !ok {
				continue
			}
			nr.Requests += in.Requests
			nr.OK += in.OK
			nr.Errors = nr.Errors.Add(in.Errors)
			for code, n := range in.StatusCodes {
				nr.StatusCodes[code] += n
			}
			if err := mergeInto(acc, in.Histogram, sf.Path, "requests_by_name."+name+".histogram"); err != nil {
				return err
			}
		}
		enc, err := schema.EncodeHistogram(acc)
		if err != nil {
			return err
		}
		nr.Histogram, nr.LatencyMS = enc, schema.Summarize(acc)
		out.RequestsByName[name] = nr
	}
	return nil
}

// namedUnion is every request name of the steps, request_order first.
func namedUnion(steps []File) []string {
	names := slices.Clone(steps[0].Step.RequestOrder)
	for _, sf := range steps {
		for _, name := range slices.Sorted(maps.Keys(sf.Step.RequestsByName)) {
			names = appendNew(names, name)
		}
	}
	return names
}

// EncodeStep writes a step record as indented JSON and a newline.
func EncodeStep(w io.Writer, s *schema.Step) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding step: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
