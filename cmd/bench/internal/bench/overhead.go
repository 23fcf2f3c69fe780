package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
)

// benchOverhead is --metrics-overhead: what loadstep --metrics-addr costs
// the driver. On nginx, at each connection count and engine, loadstep runs
// without and with --metrics-addr in turns, c.rounds times, the order
// flipped each round (compare's rotation); the second arm is scraped every
// c.metricsScrape, as a Prometheus would, so serving the scrapes counts in
// its CPU. The figure is the median over rounds of the per-round ratio of
// CPU per request, with it and without, beside those ratios and their
// spread.
func benchOverhead(ctx context.Context, c config, raw *rawLog, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "idpbench-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	url, stopTarget, err := startTarget(ctx, c, "nginx", dir)
	if err != nil {
		return err
	}
	defer stopTarget()
	fmt.Fprintf(stdout, "loadstep without and with --metrics-addr (scraped every %s) on nginx, %s each run, "+
		"in turns, the order flipped each round. Each figure is the median over %d rounds; a ratio is the median "+
		"over rounds of the --metrics-addr run's figure divided by the run without it in the same round, the "+
		"\"by round\" columns list those ratios in round order.\n\n", c.metricsScrape, c.duration, c.rounds)
	fmt.Fprintf(stdout, "| c | driver | req/s (median) | req/s ÷ off's (median of per-round ratios) | req/s ÷ off's by round "+
		"| CPU µs/req (median) | CPU ÷ off's (median of per-round ratios) | CPU ÷ off's by round | P50 ms (median) | RSS MB (median) |\n")
	fmt.Fprintf(stdout, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	var spreads []string
	for _, n := range c.conns {
		for _, eng := range c.engines {
			ds := overheadDrivers(ctx, c, url, n, dir, eng)
			rec := &ratioLog{raw: raw}
			rows, err := compare(ds, c.rounds, rawRecord{Table: "metrics-overhead", Target: "nginx", Conns: n},
				rec, fmt.Sprintf("%s c=%d", url, n), stderr)
			if err != nil {
				return fmt.Errorf("nginx c=%d %s: %w", n, eng, err)
			}
			for _, row := range rows {
				fmt.Fprintf(stdout, "| %d | %s |\n", n, row)
			}
			spreads = append(spreads, fmt.Sprintf("c=%d %s: %s", n, eng, rec.cpuSpread()))
		}
	}
	fmt.Fprintf(stdout, "\nCPU per request, --metrics-addr ÷ without, per-round ratios:\n\n")
	for _, s := range spreads {
		fmt.Fprintf(stdout, "- %s\n", s)
	}
	return nil
}

// overheadDrivers are loadstep on engine eng at n connections, without
// and with --metrics-addr on a free port, scraped.
func overheadDrivers(ctx context.Context, c config, url string, n int, dir, eng string) []driver {
	name := "loadstep " + eng
	return []driver{
		{name, func() (measurement, error) { return runLoadstep(ctx, c, url, n, dir, "--engine", eng) }},
		{name + " --metrics-addr", func() (measurement, error) { return runScraped(ctx, c, url, n, dir, eng) }},
	}
}

// runScraped runs loadstep with --metrics-addr and scrapes it every
// c.metricsScrape while it runs; a run that no scrape reached is an error
// (the arm would measure nothing).
func runScraped(ctx context.Context, c config, url string, n int, dir, eng string) (measurement, error) {
	port, err := freePort()
	if err != nil {
		return measurement{}, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	sctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var scrapes int
	wg.Go(func() { scrapes = scrapeEvery(sctx, "http://"+addr+"/metrics", c.metricsScrape) })
	m, err := runLoadstep(ctx, c, url, n, dir, "--engine", eng, "--metrics-addr", addr)
	stop()
	wg.Wait()
	if err == nil && scrapes == 0 && c.duration >= c.metricsScrape {
		err = fmt.Errorf("loadstep --metrics-addr %s: no scrape succeeded", addr)
	}
	m.scrapes = scrapes
	return m, err
}

// scrapeEvery GETs url every every until ctx is done and returns how many
// answered 200 (before loadstep listens and after it closes, none does).
func scrapeEvery(ctx context.Context, url string, every time.Duration) int {
	client := &http.Client{Timeout: every}
	tick := time.NewTicker(every)
	defer tick.Stop()
	ok := 0
	for {
		select {
		case <-ctx.Done():
			return ok
		case <-tick.C:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			continue
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode == http.StatusOK {
			ok++
		}
	}
}

// ratioLog passes the runs on to the raw log and keeps each round's CPU
// per request by driver, for the spread of the per-round ratios.
type ratioLog struct {
	raw *rawLog
	cpu map[string][]float64 // by driver, in round order
	off string               // the first driver seen: the arm without
}

func (r *ratioLog) write(base rawRecord, m measurement) error {
	if r.cpu == nil {
		r.cpu, r.off = map[string][]float64{}, base.Driver
	}
	r.cpu[base.Driver] = append(r.cpu[base.Driver], m.cpuPerReqUS())
	return r.raw.write(base, m)
}

// cpuSpread describes the per-round ratios on ÷ off: median, range and
// quartiles.
func (r *ratioLog) cpuSpread() string {
	var on []float64
	for d, v := range r.cpu {
		if d != r.off {
			on = v
		}
	}
	off := r.cpu[r.off]
	var v []float64
	for i := range min(len(on), len(off)) {
		v = append(v, on[i]/off[i])
	}
	if len(v) == 0 {
		return "no rounds"
	}
	s := slices.Clone(v)
	slices.Sort(s)
	q := func(p float64) float64 { return s[int(p*float64(len(s)-1)+0.5)] }
	return fmt.Sprintf("median %.4f, min %.4f, max %.4f, quartiles %.4f-%.4f, %d rounds", median(v), s[0], s[len(s)-1], q(0.25), q(0.75), len(v))
}
