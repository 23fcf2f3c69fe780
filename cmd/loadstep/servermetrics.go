package main

import (
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
)

// serverMetricsFlags are the --server-metrics* flags: the product's own
// metrics, scraped at the window's edges.
type serverMetricsFlags struct {
	url, out    string
	every       time.Duration
	sel, status string
	parsed      *url.URL
	selector    *schema.ServerSelector // from --server-metrics-select; nil = the product's table
}

func (f *serverMetricsFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.url, "server-metrics", "", "the product's Prometheus text exposition URL (http or https): scraped when the measured window starts and after its drain, each scrape saved raw and recorded in server_metrics; a failed scrape is recorded, never fails the step; default none")
	fs.StringVar(&f.out, "server-metrics-out", "", "with --server-metrics: the raw scrapes go to PREFIX.start.prom, PREFIX.end.prom, PREFIX.001.prom ... (mode 0644); default: the -o file without .json, plus .metrics")
	fs.DurationVar(&f.every, "server-metrics-every", 0, "with --server-metrics: also scrape every this long inside the window (duration, e.g. 5s); default 0 = the edges only")
	fs.StringVar(&f.sel, "server-metrics-select", "", "with --server-metrics: the scenario's series, family{label=\"value\",...} (exact matches), recorded for the report; default: the product's table in internal/servermetrics")
	fs.StringVar(&f.status, "server-metrics-status-label", "status", "with --server-metrics-select: the label that holds the HTTP status")
}

// validate checks the flags; output is -o.
func (f *serverMetricsFlags) validate(output string) error {
	if f.url == "" {
		if f.out != "" || f.every != 0 || f.sel != "" {
			return cli.Usagef("--server-metrics-out, --server-metrics-every and --server-metrics-select need --server-metrics")
		}
		return nil
	}
	u, err := url.Parse(f.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cli.Usagef("--server-metrics %q: want an http or https URL", f.url)
	}
	f.parsed = u
	switch {
	case f.every < 0:
		return cli.Usagef("--server-metrics-every: must not be negative, got %s", f.every)
	case f.out == "" && (output == "-" || output == ""):
		return cli.Usagef("--server-metrics: -o is stdout; give --server-metrics-out PREFIX for the raw scrapes")
	}
	if f.sel != "" {
		sel, err := servermetrics.ParseSelector(f.sel, f.status)
		if err != nil {
			return cli.Usagef("--server-metrics-select: %v", err)
		}
		f.selector = sel.Record()
	}
	return nil
}

// scraper is the scraper the flags ask for, nil without --server-metrics.
func (f *serverMetricsFlags) scraper(output string, stderr io.Writer) *servermetrics.Scraper {
	if f.parsed == nil {
		return nil
	}
	prefix := f.out
	if prefix == "" {
		prefix = strings.TrimSuffix(output, ".json") + ".metrics"
	}
	dir := "."
	if output != "-" && output != "" {
		dir = filepath.Dir(output)
	}
	return servermetrics.NewScraper(servermetrics.ScraperConfig{URL: f.parsed, Prefix: prefix, StepDir: dir,
		Every: f.every, Log: stderr})
}
