package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/schema"
)

// writeRound writes round-1 steps of S2 client_credentials, one per qps
// (connections 2, 4, 8 ...), P99 doubling at every level.
func writeRound(t *testing.T, dir string, round int, qps ...float64) {
	t.Helper()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, q := range qps {
		c := 2 << i
		s := schema.Step{Schema: schema.StepV1, Product: "refop", Scenario: schema.ScenarioClientCredentials,
			Check: schema.CheckAccessToken, Status: schema.StatusComplete, Connections: c, QPS: q,
			Requests: int64(q), OK: int64(q), Start: start, End: start.Add(time.Second),
			LatencyMS: schema.Latency{P99: float64(int(1) << i)}}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ladder.StepPath(dir, s.Scenario, c, round), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readKnee(t *testing.T, dir string) *schema.Knee {
	t.Helper()
	k, err := ladder.ReadKnee(ladder.KneePath(dir, schema.ScenarioClientCredentials))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

const fullLadder = "2 4 8 16 32 64 128"

func knee(dir string, extra ...string) result {
	return runAgg(context.Background(), "", append([]string{"ladder", "knee", "--dir", dir,
		"--scenario", schema.ScenarioClientCredentials, "--ladder", fullLadder}, extra...)...)
}

func candidates(dir string) result {
	return runAgg(context.Background(), "", "ladder", "candidates", "--dir", dir, "--scenario", schema.ScenarioClientCredentials)
}

func TestLadderKneeStopsAndCandidates(t *testing.T) {
	dir := t.TempDir()
	kneeFile := ladder.KneePath(dir, schema.ScenarioClientCredentials)
	// Flat from c=8: the rule stops after c=32, and not before.
	qps := []float64{500, 1000, 2000, 2050, 2080}
	for n := 1; n <= len(qps); n++ {
		writeRound(t, dir, 1, qps[:n]...)
		r := knee(dir)
		want := "continue\n"
		if n == len(qps) {
			want = "stop\n"
		}
		if r.code != 0 || r.stdout != want {
			t.Fatalf("after %d levels: exit %d, stdout %q, want %q; stderr %s", n, r.code, r.stdout, want, r.stderr)
		}
		if _, err := os.Stat(kneeFile); (err == nil) != (n == len(qps)) {
			t.Fatalf("after %d levels: knee record exists: %v", n, err == nil)
		}
	}
	k := readKnee(t, dir)
	if k.StoppedAfter != 32 || !slices.Equal(k.Skipped, []int{64, 128}) || !slices.Equal(k.Measured, []int{2, 4, 8, 16, 32}) ||
		k.FullLadder || k.Product != "refop" || k.NoisePct != 5 ||
		k.Reason != "c=16 and c=32 added < 5% to c=8's 2,000 qps while P99 rose 4.00 -> 16.0 ms" {
		t.Errorf("knee record %+v", k)
	}
	// Later rounds repeat the best (c=32) and its 2 nearest lower levels within 10%.
	r := candidates(dir)
	if r.code != 0 || r.stdout != "8 16 32\n" {
		t.Fatalf("candidates: exit %d, stdout %q; stderr %s", r.code, r.stdout, r.stderr)
	}
	if k := readKnee(t, dir); !slices.Equal(k.Candidates, []int{8, 16, 32}) || k.StoppedAfter != 32 || !strings.Contains(k.CandidatesReason, "c=32 has round 1's best qps (2,080)") {
		t.Errorf("knee record after candidates %+v", k)
	}
}

func TestLadderKneeFullLadder(t *testing.T) {
	dir := t.TempDir()
	writeRound(t, dir, 1, 500, 1000, 2000, 2050, 2080, 2090)
	r := knee(dir, "--full-ladder")
	if r.code != 0 || r.stdout != "continue\n" {
		t.Fatalf("exit %d, stdout %q; stderr %s", r.code, r.stdout, r.stderr)
	}
	k := readKnee(t, dir)
	if !k.FullLadder || k.StoppedAfter != 32 || !slices.Equal(k.Skipped, []int{64, 128}) || !slices.Equal(k.Measured, []int{2, 4, 8, 16, 32, 64}) {
		t.Errorf("knee record %+v", k)
	}
}

func TestLadderKneeNoKnee(t *testing.T) {
	dir := t.TempDir()
	writeRound(t, dir, 1, 100, 200, 400, 800, 1600, 3200, 6400)
	if r := knee(dir); r.code != 0 || r.stdout != "continue\n" {
		t.Fatalf("exit %d, stdout %q; stderr %s", r.code, r.stdout, r.stderr)
	}
	// The ladder is at its end: the record says the rule did not stop it.
	k := readKnee(t, dir)
	if k.StoppedAfter != 0 || len(k.Skipped) != 0 || !strings.HasPrefix(k.Reason, "no knee before the end of the ladder: c=64 added 100%") {
		t.Errorf("knee record %+v", k)
	}
	if r := candidates(dir); r.code != 0 || r.stdout != "128\n" {
		t.Errorf("candidates: exit %d, stdout %q; stderr %s", r.code, r.stdout, r.stderr)
	}
}

func TestLadderErrors(t *testing.T) {
	dir := t.TempDir()
	bad := t.TempDir()
	if err := os.WriteFile(ladder.StepPath(bad, schema.ScenarioClientCredentials, 2, 1), []byte(`{"schema":"idpbench.step/v1"`), 0o644); err != nil {
		t.Fatal(err)
	}
	badKnee := t.TempDir()
	if err := os.WriteFile(ladder.KneePath(badKnee, schema.ScenarioClientCredentials), []byte(`{"schema":"idpbench.knee/v1","product":"p"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := schema.ScenarioClientCredentials
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", []string{"ladder"}, 2, "ladder: a subcommand is required"},
		{"unknown subcommand", []string{"ladder", "elbow"}, 2, `unknown subcommand "elbow"`},
		{"no dir", []string{"ladder", "knee", "--scenario", s, "--ladder", "2 4"}, 2, "--dir and --scenario are required"},
		{"no ladder", []string{"ladder", "knee", "--dir", dir, "--scenario", s}, 2, "--ladder is required"},
		{"a bad ladder", []string{"ladder", "knee", "--dir", dir, "--scenario", s, "--ladder", "2 x"}, 2, `"x" is not a connection count`},
		{"a bad noise", []string{"ladder", "knee", "--dir", dir, "--scenario", s, "--ladder", "2", "--noise", "0"}, 2, "--noise 0"},
		{"an argument", []string{"ladder", "candidates", "--dir", dir, "--scenario", s, "extra"}, 2, `unexpected argument "extra"`},
		{"no steps", []string{"ladder", "knee", "--dir", dir, "--scenario", s, "--ladder", "2 4"}, 1,
			"no round-1 step of client_credentials in " + dir},
		{"a malformed step names its file", []string{"ladder", "knee", "--dir", bad, "--scenario", s, "--ladder", "2 4"}, 1,
			filepath.Join(bad, "client_credentials-c2.json") + ": unexpected EOF"},
		{"candidates before round 1 ends", []string{"ladder", "candidates", "--dir", dir, "--scenario", s}, 1,
			"round 1 of client_credentials is not complete: no knee record " + filepath.Join(dir, "client_credentials.knee.json")},
		{"a malformed knee record names its file", []string{"ladder", "candidates", "--dir", badKnee, "--scenario", s}, 1,
			filepath.Join(badKnee, "client_credentials.knee.json") + ": not a valid knee record: no scenario"},
		{"pool-size: an unknown mode", []string{"ladder", "pool-size", "--mode", "borrow", "-c", "2", "--duration", "10"}, 2, `unknown pool mode "borrow"`},
		{"pool-size: no duration", []string{"ladder", "pool-size", "--mode", "chain", "-c", "2"}, 2, "--duration"},
		{"pool-size: a malformed step names its file", []string{"ladder", "pool-size", "--mode", "consume", "-c", "4", "--duration", "10",
			"--prev", filepath.Join(bad, "client_credentials-c2.json")}, 1, filepath.Join(bad, "client_credentials-c2.json") + ": unexpected EOF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runAgg(context.Background(), "", tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", r.code, r.stdout, r.stderr, tc.code, tc.want)
			}
		})
	}
}

func TestLadderHelp(t *testing.T) {
	for _, args := range [][]string{{"ladder", "knee", "--help"}, {"ladder", "candidates", "-h"}, {"ladder", "--help"}} {
		r := runAgg(context.Background(), "", args...)
		if r.code != 0 || !strings.Contains(r.stdout, "aggregate ladder") || !strings.Contains(r.stdout, "--dir") && args[1] != "--help" {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
	}
}

// A resumed round 1 has the files of levels it has not reached yet: --at
// keeps them out, so it stops where the first session stopped, not before.
func TestLadderKneeAt(t *testing.T) {
	dir := t.TempDir()
	writeRound(t, dir, 1, 500, 1000, 2000, 2050, 2080)
	for _, tc := range []struct {
		at, want string
		code     int
	}{
		{"8", "continue\n", 0}, {"16", "continue\n", 0}, {"32", "stop\n", 0}, {"64", "", 1}, {"3", "", 1},
	} {
		r := knee(dir, "--at", tc.at)
		if r.code != tc.code || r.stdout != tc.want {
			t.Errorf("--at %s: exit %d, stdout %q, want %d %q; stderr %s", tc.at, r.code, r.stdout, tc.code, tc.want, r.stderr)
		}
		if tc.at == "16" {
			if _, err := os.Stat(ladder.KneePath(dir, schema.ScenarioClientCredentials)); err == nil {
				t.Errorf("--at 16 wrote a knee record")
			}
		}
	}
	if r := knee(dir, "--at", "64"); !strings.Contains(r.stderr, "no round-1 step of client_credentials at c=64") {
		t.Errorf("--at 64: stderr %q", r.stderr)
	}
	if r := knee(dir, "--at", "3"); !strings.Contains(r.stderr, "c=3 is not a level of the ladder") {
		t.Errorf("--at 3: stderr %q", r.stderr)
	}
}

// TestLadderPoolSize: the size printed for each mode (internal/ladder's
// TestPoolSize holds the arithmetic), from a previous step's file.
func TestLadderPoolSize(t *testing.T) {
	dir := t.TempDir()
	writeRound(t, dir, 1, 100, 100) // c=2 and c=4 at 100 qps
	prev := ladder.StepPath(dir, schema.ScenarioClientCredentials, 4, 1)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "consume", "-c", "8", "--prev", prev, "--warmup", "60", "--duration", "10"}, "16816\n"},
		{[]string{"--mode", "consume", "-c", "2", "--warmup", "60", "--duration", "10"}, "7000\n"},
		{[]string{"--mode", "chain", "-c", "8", "--duration", "10"}, "16\n"},
		{[]string{"--mode", "reuse", "-c", "8", "--duration", "10", "--reuse", "64"}, "64\n"},
	} {
		r := runAgg(context.Background(), "", append([]string{"ladder", "pool-size"}, tc.args...)...)
		if r.code != 0 || r.stdout != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}
