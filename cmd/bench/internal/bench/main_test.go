package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeDriver returns its rates (requests in 1 s) one run after another.
func fakeDriver(name string, rates ...int64) driver {
	return driver{name, func() (measurement, error) {
		r := rates[0]
		rates = rates[1:]
		return measurement{requests: r, seconds: 1, cpuS: float64(r) * 10e-6, rssBytes: 10 << 20, p50MS: 0.5}, nil
	}}
}

// TestCompareRatios: the ratio column is the median of the per-round
// ratios, listed beside it, which differs from the ratio of the medians when
// the rounds swing (here 112/90 = 1.24 against a paired 0.97, the shape of
// docs/load-generator.md's nginx c=128 epoll row), and every run is in the raw log.
func TestCompareRatios(t *testing.T) {
	ds := []driver{fakeDriver("wrk", 90, 116, 85), fakeDriver("loadstep epoll", 112, 112, 82)}
	var raw bytes.Buffer
	rows, err := compare(ds, 3, rawRecord{Table: "compare", Target: "nginx", Conns: 128},
		&rawLog{enc: json.NewEncoder(&raw)}, "test", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"wrk | 90 | — | — | 10.0 | — | — | 0.500 | 10.0",
		"loadstep epoll | 112 | 0.97 | 1.24 0.97 0.96 | 10.0 | 1.00 | 1.00 1.00 1.00 | 0.500 | 10.0",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}

	var got []rawRecord
	dec := json.NewDecoder(&raw)
	for dec.More() {
		var r rawRecord
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	// Round by round, the order rotated: wrk first in round 1, loadstep in round 2.
	type run struct {
		round, turn int
		driver      string
		reqPerS     float64
	}
	wantRuns := []run{{1, 1, "wrk", 90}, {1, 2, "loadstep epoll", 112}, {2, 1, "loadstep epoll", 112},
		{2, 2, "wrk", 116}, {3, 1, "wrk", 85}, {3, 2, "loadstep epoll", 82}}
	if len(got) != len(wantRuns) {
		t.Fatalf("%d raw records, want %d", len(got), len(wantRuns))
	}
	for i, w := range wantRuns {
		r := got[i]
		if r.Table != "compare" || r.Target != "nginx" || r.Conns != 128 || r.Round != w.round || r.Turn != w.turn ||
			r.Driver != w.driver || r.ReqPerS != w.reqPerS || r.Requests != int64(w.reqPerS) || r.Start.IsZero() {
			t.Errorf("raw record %d = %+v, want %+v", i, r, w)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := config{conns: []int{16}, duration: 5e9, rounds: 3, raw: "x.jsonl"}
	if err := ok.validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for name, change := range map[string]func(*config){
		"no rounds":        func(c *config) { c.rounds = 0 },
		"sub-second":       func(c *config) { c.duration = 5e8 },
		"fractional":       func(c *config) { c.duration = 15e8 },
		"raw on stdout":    func(c *config) { c.raw = "-" },
		"zero connections": func(c *config) { c.conns = []int{16, 0} },
		"no scrape":        func(c *config) { c.metricsOverhead, c.metricsScrape = true, 0 },
	} {
		c := ok
		change(&c)
		if err := c.validate(); err == nil {
			t.Errorf("%s: validate passed", name)
		}
	}
}

// TestOverheadSpread: the metrics-overhead table's spread line pairs each
// round's run with --metrics-addr with the run without it of the same
// round, whichever ran first (the order flips each round).
func TestOverheadSpread(t *testing.T) {
	// CPU per request is 10 us for every run; the on arm's cpuS is scaled
	// by its rate in fakeDriver, so give it the same rates and scale here.
	off := fakeDriver("loadstep epoll", 100, 100, 100, 100)
	on := fakeDriver("loadstep epoll --metrics-addr", 100, 100, 100, 100)
	scale := []float64{1.01, 0.99, 1.03, 1.00}
	onRun := on.run
	on.run = func() (measurement, error) {
		m, err := onRun()
		m.cpuS *= scale[0]
		scale = scale[1:]
		return m, err
	}
	rec := &ratioLog{}
	if _, err := compare([]driver{off, on}, 4, rawRecord{Table: "metrics-overhead"}, rec, "test", io.Discard); err != nil {
		t.Fatal(err)
	}
	want := "median 1.0050, min 0.9900, max 1.0300, quartiles 1.0000-1.0100, 4 rounds"
	if got := rec.cpuSpread(); got != want {
		t.Errorf("spread %q, want %q", got, want)
	}
}

// TestRunLikeEveryTool: --help and --version on stdout with exit 0; a bad
// flag is one line and the hint, exit 2; a missing driver fails before
// anything runs; and none of these writes anything on stdout but the help
// or the version, nor the -o file.
func TestRunLikeEveryTool(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bench.md")
	missing := filepath.Join(t.TempDir(), "nosuch")
	for _, c := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"--help"}, 0, "Exit codes: 0 ok, 1", ""},
		{[]string{"--version"}, 0, "bench ", ""},
		{[]string{"--bogus"}, 2, "", "bench: unknown flag: --bogus\nTry 'bench --help'.\n"},
		{[]string{"--targets", "apache"}, 2, "", "bench: --targets: unknown target \"apache\" (want nginx or refop)\nTry 'bench --help'.\n"},
		{[]string{"--wrk", missing, "--targets", "nginx", "-o", out}, 1, "", "bench: --"},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stdout.String(), c.stdout) || (c.stdout == "" && stdout.Len() > 0) ||
			!strings.Contains(stderr.String(), c.stderr) || (c.stderr == "" && stderr.Len() > 0) {
			t.Errorf("bench %q: exit %d, stdout %q, stderr %q; want %d, %q, %q", c.args, code, stdout.String(), stderr.String(), c.code, c.stdout, c.stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s (%v)", out, err)
	}
}

// TestCheck: every program the tables need is found before any runs;
// --metrics-overhead needs no wrk and no refop.
func TestCheck(t *testing.T) {
	found := map[string]bool{"bin/loadstep": true, "wrk": true, "nginx": true}
	look := func(p string) (string, error) {
		if found[p] {
			return p, nil
		}
		return "", errors.New("not found")
	}
	base := config{loadstep: "bin/loadstep", wrk: "wrk", nginx: "nginx", targets: []string{"nginx", "refop"}}
	for name, tc := range map[string]struct {
		change func(*config)
		want   string
	}{
		"all there":        {func(c *config) { c.refop = "bin/loadstep" }, ""},
		"no refop binary":  {func(c *config) {}, "--refop: needed for the refop target"},
		"refop missing":    {func(c *config) { c.refop = "refop" }, "--refop refop: not found"},
		"no wrk":           {func(c *config) { c.wrk, c.targets = "wrk2", []string{"nginx"} }, "--wrk wrk2: not found"},
		"overhead, no wrk": {func(c *config) { c.wrk, c.metricsOverhead = "wrk2", true }, ""},
		"no nginx, refop":  {func(c *config) { c.nginx, c.refop, c.targets = "x", "bin/loadstep", []string{"refop"} }, ""},
		"loadstep missing": {func(c *config) { c.loadstep, c.targets = "ls", []string{"nginx"} }, "--loadstep ls: not found"},
	} {
		c := base
		tc.change(&c)
		err := c.check(look)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}
