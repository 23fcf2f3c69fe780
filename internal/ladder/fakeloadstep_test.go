package ladder

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// The fake loadstep is this test binary run with IDPBENCH_FAKE_LOADSTEP=1
// (as BIN/loadstep, a symlink: fakeBin). It appends its arguments to
// FAKE_LOADSTEP_LOG (a JSON array a line) and writes a complete step record
// to its -o: qps and P99 from FAKE_QPS ("C=QPS/P99,..."; else 100c and 1 ms).
// With --rate R it writes a rate-mode record: sustained up to
// FAKE_SUSTAINS requests/s (default any rate), above it not sustained,
// having completed FAKE_SUSTAINS a second; at rates up to FAKE_FAILS_UPTO
// every request fails (401: an expired pool).
// At c=FAKE_LOST_AT it writes a target_lost record and exits 4; with
// FAKE_WAIT=FILE it creates FILE, waits for SIGINT, writes an interrupted
// record and exits 130.
func TestMain(m *testing.M) {
	if os.Getenv("IDPBENCH_FAKE_LOADSTEP") == "1" {
		os.Exit(fakeLoadstep(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeLoadstep(args []string) int {
	if b, err := json.Marshal(args); err == nil {
		f, err := os.OpenFile(os.Getenv("FAKE_LOADSTEP_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(f, "%s\n", b)
		f.Close()
	}
	arg := func(name string) string {
		if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	c, _ := strconv.Atoi(arg("-c"))
	qps, p99 := float64(100*c), 1.0
	for kv := range strings.SplitSeq(os.Getenv("FAKE_QPS"), ",") {
		if at, v, ok := strings.Cut(kv, "="); ok && at == strconv.Itoa(c) {
			q, p, _ := strings.Cut(v, "/")
			qps, _ = strconv.ParseFloat(q, 64)
			p99, _ = strconv.ParseFloat(p, 64)
		}
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := schema.Step{Schema: schema.StepV1, Scenario: arg("--scenario"), Check: schema.ScenarioCheck(arg("--scenario")),
		Product: arg("--product"), Status: schema.StatusComplete, Connections: c, Start: start, End: start.Add(3 * time.Second),
		QPS: qps, Requests: int64(3 * qps), OK: int64(3 * qps), LatencyMS: schema.Latency{P99: p99}}
	if rate, err := strconv.ParseFloat(arg("--rate"), 64); err == nil {
		s.RateRPS = rate
		done, v := rate, schema.Sustain{Verdict: schema.SustainYes, Why: "fake"}
		if limit, err := strconv.ParseFloat(os.Getenv("FAKE_SUSTAINS"), 64); err == nil && rate > limit {
			done, v = limit, schema.Sustain{Verdict: schema.SustainNo, Why: "fake", GrowthMSPerS: 1000 * (rate/limit - 1)}
		}
		s.CompletedRPS, s.Sustain = &done, &v
		if upto, err := strconv.ParseFloat(os.Getenv("FAKE_FAILS_UPTO"), 64); err == nil && rate <= upto {
			s.OK, s.ErrorRate, s.StatusCodes, s.Errors.Non2xx = 0, 1, map[string]int64{"401": s.Requests}, s.Requests
		}
	}
	code := 0
	switch {
	case os.Getenv("FAKE_LOST_AT") == strconv.Itoa(c):
		s.Status, code = schema.StatusTargetLost, 4
	case os.Getenv("FAKE_WAIT") != "":
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt)
		if err := os.WriteFile(os.Getenv("FAKE_WAIT"), nil, 0o644); err != nil {
			return 1
		}
		<-ch
		s.Status, code = schema.StatusInterrupted, 130
	}
	b, _ := json.Marshal(s)
	if err := os.WriteFile(arg("-o"), b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

// fakeBin is a directory whose loadstep is the fake loadstep, and the file
// its arguments go to.
func fakeBin(t *testing.T) (bin, argsLog string) {
	t.Helper()
	bin = t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(bin, "loadstep")); err != nil {
		t.Fatal(err)
	}
	argsLog = filepath.Join(bin, "args.jsonl")
	t.Setenv("IDPBENCH_FAKE_LOADSTEP", "1")
	t.Setenv("FAKE_LOADSTEP_LOG", argsLog)
	return bin, argsLog
}

// loadstepRuns are the argument lists the fake loadstep was run with.
func loadstepRuns(t *testing.T, argsLog string) [][]string {
	t.Helper()
	b, err := os.ReadFile(argsLog)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var runs [][]string
	for line := range strings.Lines(string(b)) {
		var args []string
		if err := json.Unmarshal([]byte(line), &args); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, args)
	}
	return runs
}
