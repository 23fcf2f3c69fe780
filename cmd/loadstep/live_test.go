package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/servermetrics"
)

// lockedBuffer is a bytes.Buffer safe for a writer and readers at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// liveTarget fails every other discovery request with a 500. Its own
// /metrics (for --server-metrics) scrapes loadstep's --metrics-addr,
// whose address it reads from loadstep's stderr, and keeps what it got:
// the end-edge scrape comes after the step drained, which is after the
// live view's last tick.
type liveTarget struct {
	n         atomic.Int64
	stderr    lockedBuffer
	mu        sync.Mutex
	scrapes   []servermetrics.Families
	scrapeErr []error
}

var liveAddrLine = regexp.MustCompile(`live metrics at (http://\S+/metrics)`)

func (lt *liveTarget) start(t *testing.T) (target, metrics string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		if lt.n.Add(1)%2 == 0 {
			w.WriteHeader(http.StatusInternalServerError)
		}
		fmt.Fprint(w, `{"issuer":"http://op/"}`)
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		fams, err := lt.scrapeLive()
		lt.mu.Lock()
		lt.scrapes, lt.scrapeErr = append(lt.scrapes, fams), append(lt.scrapeErr, err)
		lt.mu.Unlock()
		fmt.Fprint(w, "# TYPE x counter\nx 1\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/.well-known/openid-configuration", srv.URL + "/metrics"
}

func (lt *liveTarget) scrapeLive() (servermetrics.Families, error) {
	m := liveAddrLine.FindStringSubmatch(lt.stderr.String())
	if m == nil {
		return nil, fmt.Errorf("no address on stderr %q", lt.stderr.String())
	}
	resp, err := http.Get(m[1])
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return servermetrics.Parse(m[1], resp.Body)
}

// liveValue is the value of the counter or gauge of family name with
// exactly labels (name, value, ...); ok false when there is none.
func liveValue(fams servermetrics.Families, name string, labels ...string) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		if hasLabels(m, labels) {
			if c := m.GetCounter(); c != nil {
				return c.GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, labels []string) bool {
	if len(m.GetLabel()) != len(labels)/2 {
		return false
	}
	got := map[string]string{}
	for _, lp := range m.GetLabel() {
		got[lp.GetName()] = lp.GetValue()
	}
	for i := 0; i < len(labels); i += 2 {
		if got[labels[i]] != labels[i+1] {
			return false
		}
	}
	return true
}

// TestMetricsAddr: --metrics-addr on a free port (port 0) serves the
// running step's metrics, scraped at the window's start and after the
// drain (through --server-metrics, which this target's /metrics turns
// into scrapes of loadstep's): at the end the measured request counter,
// the error classes and the status codes are the step's, and the 500s
// show as non2xx.
func TestMetricsAddr(t *testing.T) {
	var lt liveTarget
	target, metrics := lt.start(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "s.json")
	var stdout bytes.Buffer
	code := run(context.Background(), []string{"--url", target, "--scenario", "discovery", "-c", "2",
		"--warmup", "200ms", "--duration", "500ms", "--interval", "100ms", "--metrics-addr", "127.0.0.1:0",
		"--server-metrics", metrics, "--server-metrics-out", filepath.Join(dir, "sm"), "-o", out},
		strings.NewReader(""), &stdout, &lt.stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, lt.stderr.String())
	}
	s := readStep(t, out)
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if len(lt.scrapes) != 2 {
		t.Fatalf("%d scrapes of loadstep's metrics (errors %v), want the start and the end", len(lt.scrapes), lt.scrapeErr)
	}
	for i, err := range lt.scrapeErr {
		if err != nil {
			t.Fatalf("scrape %d: %v", i, err)
		}
	}
	if _, ok := liveValue(lt.scrapes[0], "idpbench_loadstep_requests_total", "phase", "measured"); !ok {
		t.Errorf("start scrape: no requests_total{phase=\"measured\"}: %v", lt.scrapes[0])
	}
	end := lt.scrapes[1]
	if s.Errors.Non2xx == 0 || s.OK == 0 {
		t.Fatalf("step: ok %d, errors %+v: the target fails every other request", s.OK, s.Errors)
	}
	for _, c := range []struct {
		labels []string
		name   string
		want   int64
	}{
		{[]string{"phase", "measured"}, "idpbench_loadstep_requests_total", s.Requests},
		{[]string{"phase", "measured", "class", "non2xx"}, "idpbench_loadstep_errors_total", s.Errors.Non2xx},
		{[]string{"phase", "measured", "class", "socket"}, "idpbench_loadstep_errors_total", s.Errors.Socket},
		{[]string{"code", "500"}, "idpbench_loadstep_responses_total", s.StatusCodes["500"]},
		{[]string{"code", "200"}, "idpbench_loadstep_responses_total", s.StatusCodes["200"]},
		{[]string{"phase", "done"}, "idpbench_loadstep_phase", 1},
	} {
		if v, ok := liveValue(end, c.name, c.labels...); !ok || v != float64(c.want) {
			t.Errorf("end scrape: %s%v = %v (present %v), want %d", c.name, c.labels, v, ok, c.want)
		}
	}
	h := end["idpbench_loadstep_latency_seconds"].GetMetric()
	if len(h) != 1 || int64(h[0].GetHistogram().GetSampleCount()) != s.StatusCodes["200"]+s.StatusCodes["500"] {
		t.Errorf("end scrape: latency histogram %v, want a count of every response", h)
	}
	if v, _ := liveValue(end, "idpbench_loadstep_requests_total", "phase", "warmup"); v <= 0 {
		t.Errorf("end scrape: warmup requests %v, want the 200 ms warmup's", v)
	}
}

// TestMetricsAddrRefused: an address that is not HOST:PORT is a usage
// error, one in use a start error; both name the flag, and neither sends
// a request or writes a result.
func TestMetricsAddrRefused(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	defer srv.Close()
	for _, c := range []struct {
		addr string
		exit int
	}{
		{"9102", 2}, {"127.0.0.1", 2}, {"127.0.0.1:http", 2}, {"127.0.0.1:70000", 2},
		{taken.Addr().String(), 1},
	} {
		t.Run(c.addr, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "s.json")
			code, stdout, stderr := runArgs(context.Background(), "--url", srv.URL, "--scenario", "discovery",
				"--warmup", "0s", "--duration", "100ms", "--metrics-addr", c.addr, "-o", out)
			if code != c.exit || stdout != "" {
				t.Errorf("exit %d, stdout %q, want exit %d", code, stdout, c.exit)
			}
			if !strings.HasPrefix(stderr, "loadstep: --metrics-addr") || strings.Count(strings.TrimSuffix(stderr, cli.Hint("loadstep")+"\n"), "\n") != 1 {
				t.Errorf("stderr %q: want one line naming --metrics-addr", stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a result was written")
			}
		})
	}
	if n := served.Load(); n != 0 {
		t.Errorf("the target served %d requests", n)
	}
}
