package runtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	runorder "github.com/idpbench/idpbench/internal/run"
	"github.com/idpbench/idpbench/internal/schema"
)

// TestRounds proves that run-comparison.sh interleaves its rounds across
// products (round 1 of every product, then round 2 of every cell, the
// products side by side) and runs round 2 in the order its seed draws.
//
// A real run of two products, the reference OP (refop) and the generic
// adapter on its own reference OP (oidc, examples/oidc/refop.env on a free
// port), with --repeats 2: the discovery ladder at c=2 only, 2 s windows.
// Then, from the results alone: each product's two windows of discovery c=2
// (-c2.json and -c2-r2.json) began in the order refop 1, oidc 1, then
// round 2 in the order the seed draws (a seed that draws oidc first, so the
// draw is seen to be followed); each meta.json records rounds {count 2,
// order interleaved-random, the seed};
// COMPARISON.md says so; neither product was started again once the
// other had begun its round: it stayed up, idle, between its rounds; and
// while refop closed (its GC-jitter run), oidc's sampler recorded nothing:
// the idle products' samplers stop when the rounds end.
//
// About a minute. Needs jq, PostgreSQL (installed when missing and run as
// root) and the reference OP (built on first use).
func TestRounds(t *testing.T) {
	h := newHarness(t, "rounds", "jq")
	results := filepath.Join(h.work, "results")
	run := filepath.Join(results, "rounds")

	// The example configuration on a free port (its own is fixed: 19998).
	h.mustRun(nil, "", "cp", "-r", filepath.Join(h.root, "examples", "oidc"), filepath.Join(h.work, "oidc"))
	config := filepath.Join(h.work, "oidc", "refop.env")
	text := strings.ReplaceAll(readFile(t, config), "19998", strconv.Itoa(freePort(t)))
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// The first seed whose round 2 runs oidc before refop (no A/A twin
	// here: IDPBENCH_AA none).
	products := []string{"refop", "oidc"}
	order := runorder.Order{Random: true}
	for order.Seed = 1; order.Of(2, "discovery", products)[0] != "oidc"; order.Seed++ {
	}
	runLog := filepath.Join(h.work, "run.log")
	code, _ := h.run(h.with("IDPBENCH_OIDC_CONFIG="+config, "IDPBENCH_ORDER_SEED="+strconv.FormatUint(order.Seed, 10), "IDPBENCH_TMP="+h.work, "IDPBENCH_RESULTS="+results, "IDPBENCH_AA=none",
		"IDPBENCH_SCENARIOS=discovery", "IDPBENCH_LADDER=2", "IDPBENCH_WARMUP_S=1", "IDPBENCH_DURATION_S=2", "IDPBENCH_GCJITTER_S=2"),
		runLog, h.script("run-comparison.sh"), "--quick", "--only", "refop,oidc", "--repeats", "2", "--run-id", "rounds")
	if code != 0 {
		t.Fatalf("run-comparison.sh failed (exit %d); its errors and N/A reasons: %s", code, runErrors(t, runLog, run))
	}

	// The windows' order, from their start times.
	type window struct {
		name  string
		start int64
	}
	var windows []window
	for _, p := range []string{"refop", "oidc"} {
		for _, f := range []string{"discovery-c2.json", "discovery-c2-r2.json"} {
			name := p + "/" + f
			s := readStep(t, filepath.Join(run, name))
			windows = append(windows, window{name, s.Start.UnixNano()})
		}
	}
	sort.SliceStable(windows, func(i, j int) bool { return windows[i].start < windows[j].start })
	var began []string
	for _, w := range windows {
		began = append(began, w.name)
	}
	want := []string{"refop/discovery-c2.json", "oidc/discovery-c2.json", "oidc/discovery-c2-r2.json", "refop/discovery-c2-r2.json"}
	if !slices.Equal(began, want) {
		t.Errorf("the windows began in the order %s; want %s (round 2 drawn from seed %d)", strings.Join(began, " "), strings.Join(want, " "), order.Seed)
	} else {
		t.Logf("ok: windows in the order %s (round 2 drawn from seed %d)", strings.Join(began, " "), order.Seed)
	}

	for _, p := range []string{"refop", "oidc"} {
		m := readMeta(t, filepath.Join(run, p, "meta.json"))
		if m.Status != "ok" || m.Rounds == nil || *m.Rounds != (schema.Rounds{Count: 2, Order: schema.RoundsRandom, Seed: order.Seed}) {
			t.Errorf("%s meta.json: want status ok and rounds {count 2, order interleaved-random, seed %d}, got status %q (%s), rounds %+v", p, order.Seed, m.Status, m.NAReason, m.Rounds)
		}
		// provision meta's endpoints: refop's scenario table, the generic adapter's own (its entry's MetaArgs).
		if !strings.HasSuffix(m.Endpoints["discovery"], "/.well-known/openid-configuration") {
			t.Errorf("%s meta.json: endpoints %v, scenario_na %v", p, m.Endpoints, m.ScenarioNA)
		}
	}
	// While the other product runs, each stays up: no start of it from then
	// on (the generic adapter logs as its NAME, oidc:refop).
	log := lines(readFile(t, runLog))
	for _, c := range []struct{ tag, from string }{
		{"refop", "== oidc ladder discovery"},
		{"oidc:refop", "== refop round 2 discovery"},
	} {
		at := slices.IndexFunc(log, func(l string) bool { return strings.Contains(l, c.from) })
		if at < 0 {
			t.Errorf("no line %q in the run's log (%s)", c.from, runLog)
			continue
		}
		if n := startsLogged(log[at:], c.tag); n != 0 {
			t.Errorf("%s was started %d times from %q on: want it up and idle between its rounds (log: %s)", c.tag, n, c.from, runLog)
		}
	}
	if drawn := "run: round 2 in the order (seed " + strconv.FormatUint(order.Seed, 10) + "): discovery: oidc refop"; !slices.ContainsFunc(log, func(l string) bool { return strings.Contains(l, drawn) }) {
		t.Errorf("no line %q in the run's log (%s)", drawn, runLog)
	}
	if !strings.Contains(readFile(t, filepath.Join(run, "COMPARISON.md")), "- Rounds: 2, interleaved with the other products'") {
		t.Error(`COMPARISON.md: no line "- Rounds: 2, interleaved ..."`)
	}
	closingAlone(t, run, "refop", "oidc")
	if !t.Failed() {
		t.Log("ok: both metas record 2 interleaved rounds and their seed, the report says so, each product stayed up between its rounds")
	}
}

// closingAlone: while product closing ran its closing windows (shares,
// GC jitter), the idle product's sampler recorded nothing: the rounds
// stop the idle products' samplers (internal/run's stopProductSamplers).
func closingAlone(t *testing.T, run, closing, idle string) {
	var ws [][2]time.Time
	names, _ := filepath.Glob(filepath.Join(run, closing, "*.json"))
	for _, f := range names {
		var probe struct{ Schema string }
		if json.Unmarshal([]byte(readFile(t, f)), &probe) != nil || probe.Schema != schema.StepV1 {
			continue
		}
		if s := readStep(t, f); s.Labels["phase"] == "share" || s.Labels["phase"] == "gcjitter" {
			ws = append(ws, [2]time.Time{s.Start, s.End})
		}
	}
	if len(ws) == 0 {
		t.Errorf("%s: no closing window (phase share or gcjitter) under %s", closing, run)
		return
	}
	files, _ := filepath.Glob(filepath.Join(run, idle, "samples-*.jsonl"))
	records := 0
	for _, f := range files {
		for _, l := range lines(readFile(t, f)) {
			var smp schema.Sample
			if err := json.Unmarshal([]byte(l), &smp); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			records++
			for _, w := range ws {
				if !smp.T.Before(w[0]) && !smp.T.After(w[1]) {
					t.Errorf("%s's sampler recorded %s at %s, inside %s's closing window %s-%s: want only the closing product's sampler up", idle, smp.Source, smp.T.Format(time.RFC3339Nano), closing, w[0].Format(time.RFC3339Nano), w[1].Format(time.RFC3339Nano))
					return
				}
			}
		}
	}
	if records == 0 {
		t.Errorf("%s: no sampler records under %s", idle, filepath.Join(run, idle))
		return
	}
	t.Logf("ok: none of %s's %d sampler records falls in %s's %d closing windows", idle, records, closing, len(ws))
}

// startsLogged counts the lines of log in which the adapter logging as tag
// (its product name) says its product started.
func startsLogged(log []string, tag string) int {
	n := 0
	for _, l := range log {
		if strings.Contains(l, tag+": ") && strings.Contains(l, " start: ready in ") {
			n++
		}
	}
	return n
}

// runErrors is the first 5 error lines of a run's log and N/A reasons of
// its metas, for a failure's message.
func runErrors(t *testing.T, runLog, run string) string {
	var out []string
	for _, l := range lines(readFile(t, runLog)) {
		if strings.Contains(l, " error: ") {
			out = append(out, l)
		}
	}
	metas, _ := filepath.Glob(filepath.Join(run, "*", "meta.json"))
	for _, m := range metas {
		if b, err := os.ReadFile(m); err == nil {
			for _, l := range lines(string(b)) {
				if strings.Contains(l, `"na_reason"`) {
					out = append(out, l)
				}
			}
		}
	}
	return strings.Join(out[:min(len(out), 5)], "\n")
}

// readStep decodes a step record (a ladder window, a GC-jitter run); it
// fails the test when it cannot.
func readStep(t *testing.T, path string) *schema.Step {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no step %s: %v", path, err)
	}
	defer f.Close()
	s, err := schema.DecodeStep(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
