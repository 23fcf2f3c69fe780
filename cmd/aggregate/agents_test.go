package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/nginxtest"
	"github.com/idpbench/idpbench/internal/schema"
)

var agentsN = flag.Int("agents", 3, "TestAgents: agents per step, 2 or more")

// agentsRun is one step run by N loadstep agents and merged.
type agentsRun struct {
	dir    string        // the agents' records, agent-I.json, and merged.json
	agents []string      // the agents' records, by index
	merged *schema.Step  // aggregate merge of the agents' records
	sum    agentsSummary // the agents' summed requests and histogram counts (aggregate summary)
	hist   int64         // the merged record's histogram count (aggregate summary)
	served int64         // the requests nginx logged during the step
}

type agentsSummary struct {
	Requests       int64 `json:"requests"`
	HistogramCount int64 `json:"histogram_count"`
}

// TestAgents: N local loadstep agents (default 3; go test -args -agents N)
// run one step the way the pods of a Kubernetes Indexed Job would, against
// nginx on loopback; their records merged by aggregate merge (in-process)
// and checked against nginx's own access log. Every agent is one loadstep
// process (built) with the flags a Job's pod gets: the step's flags (the
// whole step's -c and --rate), one --start-at for all, a few seconds ahead
// (the setup of every agent fits in it), and --segment I/N for agent I,
// each writing its own record. nginx (one worker) logs every request it
// answers; its log is emptied before each step, so it holds the agents'
// requests only.
//
//  1. rate mode, N agents x 1,000 requests/s (-c 4N --rate 1000N), a 2 s
//     warmup and a 10 s window: the merged step has N agents, c=4N, rate
//     1000N, 10,000N requests +-1%, exactly the requests nginx logged in
//     the window: all it logged less the warmup's slots of the schedule
//     (rate x warmup; the schedule is fixed and every slot of it was sent:
//     the agents started within one interval of --start-at and none was
//     late by the timeout), its histogram count is the sum of the agents'
//     and its requests, no request failed; each agent ran 4 connections
//     and 1,000 requests/s and says when it started.
//  2. closed loop, N agents x c=8 (-c 8N), a 1 s warmup and a 5 s window:
//     one step of N agents with c=8N whose requests and histogram count
//     are the agents' sums, no request failed, nginx answered at least as
//     many (its count includes the warmup's).
//  3. the merge of a gap (every agent of the first step but agent 1) is
//     refused, exit 1, naming the missing index.
//
// The merged steps' summaries are logged.
func TestAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two steps of real load, about 30 s")
	}
	n := *agentsN
	if n < 2 {
		t.Fatalf("-agents %d: want a number of agents, 2 or more", n)
	}
	ng := nginxtest.StartNginx(t, nginxtest.Options{AccessLog: true})
	loadstep := nginxtest.Build(t, "cmd/loadstep")["loadstep"]

	rate := runAgents(t, ng, loadstep, n, "rate", 4*time.Second, "-c", fmt.Sprint(4*n), "--rate", fmt.Sprint(1000*n),
		"--warmup", "2s", "--duration", "10s", "--interval", "1s", "--timeout", "5s")
	m := rate.merged
	if m.Agents != n || m.Connections != 4*n || m.RateRPS != float64(1000*n) || m.Segment != nil ||
		math.Abs(float64(m.Requests-int64(10000*n))) > float64(100*n) || m.Status != schema.StatusComplete ||
		m.OK != m.Requests || m.ConnectErrors.Unsent != 0 {
		t.Errorf("want %d agents, c=%d, rate %d, 10,000 x %d requests +-1%%, complete, no failure: got %s",
			n, 4*n, 1000*n, n, agentsFigures(m))
	}
	warmupSlots := int64(math.Ceil(m.RateRPS * m.WarmupS))
	if m.Requests != rate.served-warmupSlots {
		t.Errorf("want the requests nginx logged in the window, all %d it logged less the warmup's rate x warmup slots (%d): got %s",
			rate.served, warmupSlots, agentsFigures(m))
	}
	if rate.hist != rate.sum.HistogramCount || rate.hist != m.Requests || m.Requests != rate.sum.Requests {
		t.Errorf("want a histogram count (%d) equal to the agents' sum %+v and to the requests: got %s", rate.hist, rate.sum, agentsFigures(m))
	}
	checkRateAgents(t, rate.agents, n)
	if !t.Failed() {
		t.Logf("ok: rate mode merged exactly: %d requests = nginx's %d less the warmup's %d", m.Requests, rate.served, warmupSlots)
	}

	closed := runAgents(t, ng, loadstep, n, "closed", 3*time.Second, "-c", fmt.Sprint(8*n),
		"--warmup", "1s", "--duration", "5s", "--interval", "1s", "--timeout", "5s")
	m = closed.merged
	if m.Agents != n || m.Connections != 8*n || m.RateRPS != 0 || m.Requests != closed.sum.Requests ||
		closed.hist != closed.sum.HistogramCount || closed.hist != m.Requests || m.OK != m.Requests ||
		m.Status != schema.StatusComplete || m.Requests > closed.served {
		t.Errorf("want one step of %d agents, c=%d, the agents' summed requests and histogram counts (%+v, %d), no failure, no more than nginx's %d: got %s",
			n, 8*n, closed.sum, closed.hist, closed.served, agentsFigures(m))
	} else {
		t.Logf("ok: closed loop merged to c=%d of %d agents", 8*n, n)
	}

	gap := append([]string{"merge", rate.agents[0]}, rate.agents[2:]...)
	r := runAgg(context.Background(), "", gap...)
	t.Logf("the merge of every agent but 1 of %d: exit %d: %s", n, r.code, strings.TrimSpace(r.stderr))
	if want := fmt.Sprintf("segment 1 of %d missing", n); r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("the merge of every agent but 1 of %d: exit %d, want 1 naming the missing index 1 (%q)", n, r.code, want)
	}
}

// runAgents runs one step as n agents of loadstep: the step's flags, one
// --start-at lead ahead, --segment I/n; nginx's log emptied first. It
// merges their records (aggregate merge) and reads what the checks need.
func runAgents(t *testing.T, ng *nginxtest.Nginx, loadstep string, n int, name string, lead time.Duration, flags ...string) agentsRun {
	t.Helper()
	run := agentsRun{dir: filepath.Join(t.TempDir(), name)}
	if err := os.MkdirAll(run.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ng.ClearLog(t)
	startAt := time.Now().Add(lead).UTC().Format(time.RFC3339Nano)
	t.Logf("%s: %d agents, --start-at %s: loadstep %s --segment I/%d", name, n, startAt, strings.Join(flags, " "), n)
	procs := make([]*nginxtest.Proc, n)
	for i := range n {
		out := filepath.Join(run.dir, fmt.Sprintf("agent-%d.json", i))
		run.agents = append(run.agents, out)
		argv := append([]string{loadstep, "--url", ng.URL, "--scenario", "discovery", "--product", "nginx"}, flags...)
		procs[i] = nginxtest.Start(t, run.dir, fmt.Sprintf("agent-%d", i),
			append(argv, "--start-at", startAt, "--segment", fmt.Sprintf("%d/%d", i, n), "-o", out)...)
	}
	for i, p := range procs {
		if code := p.Wait(t, lead+time.Minute); code != 0 {
			t.Fatalf("agent %d/%d of %s: loadstep exit %d: %s", i, n, name, code, p.LastLine())
		}
		t.Logf("agent %d/%d: %s", i, n, p.LastLine())
	}
	run.served = ng.Requests(t)
	merged := filepath.Join(run.dir, "merged.json")
	if r := runAgg(context.Background(), "", append([]string{"merge", "-o", merged}, run.agents...)...); r.code != 0 {
		t.Fatalf("aggregate merge of the %s agents: exit %d: %s", name, r.code, r.stderr)
	}
	run.merged = readStepFile(t, merged)
	t.Logf("%s merged:\n%s", name, runAgg(context.Background(), "", "summary", merged).stdout)
	for _, row := range summaryRows(t, run.agents...) {
		run.sum.Requests += row.Requests
		run.sum.HistogramCount += row.HistogramCount
	}
	run.hist = summaryRows(t, merged)[0].HistogramCount
	t.Logf("%s merged: %s, histogram %d; the agents' sums %+v; nginx logged %d", name, agentsFigures(run.merged), run.hist, run.sum, run.served)
	return run
}

// checkRateAgents: every agent of the rate step ran 4 connections and
// 1,000 requests/s of n x 1,000, from one start_at, and started within a
// second of it.
func checkRateAgents(t *testing.T, files []string, n int) {
	t.Helper()
	if len(files) != n {
		t.Fatalf("%d agents' records, want %d", len(files), n)
	}
	var startAt *time.Time
	for i, f := range files {
		s := readStepFile(t, f)
		if s.Connections != 4 || s.RateRPS != 1000 || s.Segment == nil || s.Segment.TotalRateRPS != float64(1000*n) ||
			s.StartAt == nil || s.StartLateMS == nil || *s.StartLateMS >= 1000 || (startAt != nil && !s.StartAt.Equal(*startAt)) {
			t.Errorf("agent %d: c=%d rate %g segment %+v start_at %v start_late_ms %v (first agent's start_at %v): "+
				"want every agent at 4 connections and 1,000 requests/s of the whole, one start_at, each started within a second of it",
				i, s.Connections, s.RateRPS, s.Segment, s.StartAt, s.StartLateMS, startAt)
		}
		if startAt == nil {
			startAt = s.StartAt
		}
	}
}

// summaryRows is aggregate summary --format json of files, in-process.
func summaryRows(t *testing.T, files ...string) []agentsSummary {
	t.Helper()
	r := runAgg(context.Background(), "", append([]string{"summary", "--format", "json"}, files...)...)
	if r.code != 0 {
		t.Fatalf("aggregate summary: exit %d: %s", r.code, r.stderr)
	}
	var rows []agentsSummary
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var row agentsSummary
		if err := dec.Decode(&row); err != nil {
			t.Fatalf("aggregate summary: %v", err)
		}
		rows = append(rows, row)
	}
	if len(rows) != len(files) {
		t.Fatalf("aggregate summary: %d rows for %d files", len(rows), len(files))
	}
	return rows
}

func readStepFile(t *testing.T, path string) *schema.Step {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := schema.DecodeStep(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// agentsFigures are a merged step's figures, for a message.
func agentsFigures(s *schema.Step) string {
	skew := "none"
	if s.StartSkewMS != nil {
		skew = fmt.Sprintf("%.1f ms", *s.StartSkewMS)
	}
	return fmt.Sprintf("agents %d, c=%d, rate %g, warmup %gs, %d requests, %d ok, errors %+v, connect errors %+v, start skew %s, %s",
		s.Agents, s.Connections, s.RateRPS, s.WarmupS, s.Requests, s.OK, s.Errors, s.ConnectErrors, skew, s.Status)
}
