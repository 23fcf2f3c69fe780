package gcjitter

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/adapter/adaptertest"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/schema"
)

// The fake loadstep is this test binary with IDPBENCH_FAKE_LOADSTEP=1: it
// writes its arguments to FAKE_LOADSTEP_LOG (JSON) and a complete record
// with 6 intervals to its -o.
func TestMain(m *testing.M) {
	if os.Getenv("IDPBENCH_FAKE_LOADSTEP") == "1" {
		args := os.Args[1:]
		b, _ := json.Marshal(args)
		if err := os.WriteFile(os.Getenv("FAKE_LOADSTEP_LOG"), b, 0o644); err != nil {
			os.Exit(1)
		}
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		s := schema.Step{Schema: schema.StepV1, Scenario: args[slices.Index(args, "--scenario")+1], Status: schema.StatusComplete,
			Connections: 32, Start: start, End: start.Add(time.Minute), Requests: 600, OK: 600, Intervals: make([]schema.Interval, 6)}
		b, _ = json.Marshal(s)
		if err := os.WriteFile(args[slices.Index(args, "-o")+1], b, 0o644); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestScenario(t *testing.T) {
	for _, tt := range []struct {
		na            bool
		ttl, runS     int
		scenario, why string
	}{
		{false, 0, 125, "userinfo", ""},
		{false, 3600, 125, "userinfo", ""},
		{false, 155, 125, "userinfo", ""}, // 125 + 30 = 155: enough
		{false, 154, 125, "client_credentials", "access tokens live 154s, less than the 125s run"},
		{true, 3600, 125, "client_credentials", "userinfo is N/A for this product"},
	} {
		s, why := Scenario(tt.na, tt.ttl, tt.runS)
		if s != tt.scenario || why != tt.why {
			t.Errorf("Scenario(%v, %d, %d) = %q, %q; want %q, %q", tt.na, tt.ttl, tt.runS, s, why, tt.scenario, tt.why)
		}
	}
}

func TestReuseFresh(t *testing.T) {
	for _, tt := range []struct {
		age, runS, ttl, maxAge int
		want                   bool
	}{
		{-1, 65, 0, 120, false}, // no pool
		{10, 65, 0, 120, true},
		{120, 65, 0, 120, false},
		{10, 65, 105, 120, true}, // 105 - 10 >= 65 + 30
		{11, 65, 105, 120, false},
	} {
		if got := ReuseFresh(tt.age, tt.runS, tt.ttl, tt.maxAge); got != tt.want {
			t.Errorf("ReuseFresh(age %d, run %d, ttl %d, max %d) = %v, want %v", tt.age, tt.runS, tt.ttl, tt.maxAge, got, tt.want)
		}
	}
}

func TestNewConfig(t *testing.T) {
	env := map[string]string{"IDPBENCH_ROOT": "/repo", "RUN_DIR": "r", "STATE_DIR": "s", "IDPBENCH_WARMUP_S": "2", "IDPBENCH_BIN": "b"}
	c, err := NewConfig(Options{Product: "keycloak", Quick: true}, func(k string) string { return env[k] })
	if err != nil || c.DurationS != 60 || c.WarmupS != 2 || c.Connections != 32 || c.ReuseMaxAgeS != 120 || c.StepTotal != 1 ||
		c.Adapter != "/repo/products/keycloak/adapter" || c.Loadstep != "b/loadstep" || c.Profile != "quick" {
		t.Errorf("%+v, %v", c, err)
	}
	env["IDPBENCH_GCJITTER_C"] = "0"
	if _, err := NewConfig(Options{Product: "keycloak"}, func(k string) string { return env[k] }); cli.ExitCode(err) != cli.ExitUsage ||
		!strings.Contains(err.Error(), "IDPBENCH_GCJITTER_C 0: want a whole number >= 1") {
		t.Errorf("c=0: %v", err)
	}
}

// TestRun: the fallback to client_credentials when the userinfo tokens
// expire within the run, with its labels, metrics every 5 s, the summary
// line; a rerun skips the complete record.
func TestRun(t *testing.T) {
	bin, state, runDir := t.TempDir(), t.TempDir(), t.TempDir()
	exe, _ := os.Executable()
	if err := os.Symlink(exe, filepath.Join(bin, "loadstep")); err != nil {
		t.Fatal(err)
	}
	argsLog := filepath.Join(bin, "args.json")
	t.Setenv("IDPBENCH_FAKE_LOADSTEP", "1")
	t.Setenv("FAKE_LOADSTEP_LOG", argsLog)
	for name, text := range map[string]string{"ttl-userinfo": "40\n", "metrics": "--server-metrics\nhttp://127.0.0.1:9/m\n"} {
		if err := os.WriteFile(filepath.Join(state, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ad, _ := filepath.Abs("../adapter/testdata/fakeadapter")
	env := map[string]string{"IDPBENCH_GCJITTER_S": "10"}
	c, err := NewConfig(Options{Product: "fake", Quick: true, Where: ladder.Where{RunDir: runDir, StateDir: state, StepOffset: 6, StepTotal: 7,
		Adapter: ad, Bin: bin}}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if err := Run(context.Background(), c, Env{Stdout: &log, Stderr: &log, Interrupt: cli.Interrupt, Ask: adaptertest.Ask}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	b, _ := os.ReadFile(argsLog)
	var args []string
	_ = json.Unmarshal(b, &args)
	want := []string{"--url", "http://127.0.0.1:9/client_credentials", "--scenario", "client_credentials", "-c", "32",
		"--warmup", "5s", "--duration", "10s", "--interval", "10s", "--timeout", "10s",
		"--jit-pidfile", filepath.Join(state, "pids", "fake.pid"), "--product", "fake", "--product-version", "1.2.3",
		"--label", "phase=gcjitter", "--label", "profile=quick", "--label", "fallback=client_credentials",
		"--label", "fallback_reason=access tokens live 40s, less than the 15s run",
		"--client-id", "bench", "--server-metrics", "http://127.0.0.1:9/m", "--server-metrics-every", "5s",
		"-o", filepath.Join(runDir, "fake", "gcjitter.json")}
	if !slices.Equal(args, want) {
		t.Errorf("loadstep's arguments:\n got %q\nwant %q", args, want)
	}
	for _, l := range []string{
		"gcjitter: [step 7 (of at most 7)] fake gcjitter client_credentials c=32 (5s + 10s, 10s intervals; ends in >= 15s)",
		`gcjitter: fake gcjitter: {"status":"complete","requests":600,"error_rate":0,"intervals":6}`,
	} {
		if !strings.Contains(log.String(), l) {
			t.Errorf("the log lacks %q:\n%s", l, log.String())
		}
	}
	log.Reset()
	if err := Run(context.Background(), c, Env{Stdout: &log, Stderr: &log, Ask: adaptertest.Ask}); err != nil || !strings.Contains(log.String(), "[step 7/7] fake gcjitter: complete, skipped") {
		t.Errorf("rerun: %v\n%s", err, log.String())
	}
}
