package runtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/placement"
	"github.com/idpbench/idpbench/internal/run"
	"github.com/idpbench/idpbench/internal/schema"
)

// TestPlacement proves run-comparison.sh's placement (--driver-cpus,
// --server-cpus) on real processes, and its validation:
//
//  1. validation: overlapping sets, a CPU this process may not use, one flag
//     without the other, a malformed list, --no-pin with sets: each exits 2
//     naming the flag; what the run exports to its children on this host with no
//     placement asked (shared below 4 CPUs, else a quarter of the CPUs, the
//     highest, for the driver) and with --no-pin (the split on other hosts:
//     internal/placement's tests)
//  2. compose mode (no Docker engine needed: the rendered file only): with a
//     server set, every service of the product's compose file gets it as
//     cpuset in STATE/compose.placement.yml, which every compose command adds
//  3. a real run pinned apart: run-comparison.sh --only refop, the discovery
//     ladder at c=2 and a short GC-jitter run, with the second CPU this
//     process may use for the driver and the first for the server. While it
//     runs, /proc/PID/status Cpus_allowed_list of every process of the
//     reference OP's process group and its descendants, of PostgreSQL's
//     postmaster and its children (a client backend held open by psql among
//     them), of the sampler and of every loadstep and mintpool the run
//     starts must be the set of its side; each must have been seen. Then its
//     meta.json's placement and the report's placement line, and the host
//     probe run by the one host sampler alone (host-samples-*.jsonl), not
//     by refop's sampler.
//
// About 40 s. Needs 2 CPUs, taskset, jq, PostgreSQL (installed when missing
// and run as root) and the reference OP (built on first use).
func TestPlacement(t *testing.T) {
	h := newHarness(t, "placement", "taskset", "jq", "python3")
	allowed, err := placement.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	cpus := allowed.CPUs()
	if len(cpus) < 2 {
		t.Fatalf("needs 2 CPUs to pin the driver and the server apart, has %d", len(cpus))
	}
	server, driver, outside := strconv.Itoa(cpus[0]), strconv.Itoa(cpus[1]), strconv.Itoa(cpus[len(cpus)-1]+1)
	if !t.Run("validation", func(t *testing.T) { placementRefused(h.in(t), driver, server, outside) }) ||
		!t.Run("defaults", func(t *testing.T) { placementDefaults(h.in(t), allowed) }) ||
		!t.Run("compose", func(t *testing.T) { composePlacement(h.in(t), server) }) {
		return
	}
	t.Run("run", func(t *testing.T) { placementRun(h.in(t), driver, server, len(cpus)) })
}

// placementRefused: each bad placement exits 2 naming its flag.
func placementRefused(h *harness, driver, server, outside string) {
	cases := []struct {
		want string // a regexp the output matches
		args []string
	}{
		{fmt.Sprintf(`--driver-cpus \(%s\) and --server-cpus \(%s,%s\) overlap on CPUs %s`, driver, server, driver, driver),
			[]string{"--driver-cpus", driver, "--server-cpus", server + "," + driver}},
		{fmt.Sprintf(`--driver-cpus \(IDPBENCH_DRIVER_CPUS\) "%s": CPU %s is not one this process may use`, outside, outside),
			[]string{"--driver-cpus", outside, "--server-cpus", server}},
		{fmt.Sprintf(`--server-cpus \(IDPBENCH_SERVER_CPUS\) "%s,%s": CPU %s is not one`, server, outside, outside),
			[]string{"--driver-cpus", driver, "--server-cpus", server + "," + outside}},
		{`--driver-cpus .* needs --server-cpus`, []string{"--driver-cpus", driver}},
		{`--server-cpus .* needs --driver-cpus`, []string{"--server-cpus", server}},
		{`--driver-cpus .*"1-0": not a CPU list`, []string{"--driver-cpus", "1-0", "--server-cpus", server}},
		{`--no-pin .* contradict`, []string{"--no-pin", "--driver-cpus", driver, "--server-cpus", server}},
	}
	// A placement wrongly accepted starts a run: its files go to scratch, and it is stopped.
	env := h.with("IDPBENCH_DRIVER_CPUS", "IDPBENCH_SERVER_CPUS", "IDPBENCH_PIN",
		"IDPBENCH_TMP="+h.work, "IDPBENCH_RESULTS="+filepath.Join(h.work, "refused"))
	for _, c := range cases {
		code, out := h.runFor(time.Minute, env, h.logFile("refused"), h.script("run-comparison.sh"), c.args...)
		line := regexp.MustCompile(c.want).FindString(out)
		if code != 2 || line == "" {
			h.t.Errorf("run-comparison.sh %s: want exit 2 saying /%s/, got exit %d: %s", strings.Join(c.args, " "), c.want, code, out)
			continue
		}
		h.t.Logf("ok: %s -> exit 2: %s", strings.Join(c.args, " "), line)
	}
}

// placementDefaults: what the run exports to its children on this host with no
// placement asked (shared below 4 CPUs, saying why; else the highest
// quarter for the driver) and with --no-pin: shared, saying so.
func placementDefaults(h *harness, allowed placement.Set) {
	n := allowed.Len()
	here := []string{"shared", "", "", fmt.Sprintf("%d CPUs: fewer than 4, driver and server share them", n)}
	if n >= 4 {
		server, driver := allowed.Split(n - n/4)
		here = []string{"pinned", driver.String(), server.String(), ""}
	}
	for _, c := range []struct {
		pin  string   // IDPBENCH_PIN
		want []string // IDPBENCH_PLACEMENT, _DRIVER_CPUS, _SERVER_CPUS, _PLACEMENT_REASON
	}{
		{"", here},
		{"0", []string{"shared", "", "", fmt.Sprintf("pinning turned off (--no-pin, IDPBENCH_PIN=0): driver and server share %d CPUs", n)}},
	} {
		p, err := placement.Resolve(placement.Request{NoPin: c.pin == "0"}, allowed)
		if err != nil {
			h.t.Fatal(err)
		}
		got := placement.Env(p)
		want := []string{"IDPBENCH_DRIVER_CPUS=" + c.want[1], "IDPBENCH_SERVER_CPUS=" + c.want[2], "IDPBENCH_PLACEMENT=" + c.want[0],
			"IDPBENCH_PLACEMENT_REASON=" + c.want[3], "IDPBENCH_HOST_CPUS=" + strconv.Itoa(n)}
		if !slices.Equal(got, want) {
			h.t.Errorf("the run on this %d-CPU host, IDPBENCH_PIN=%q: exports %q, want %q", n, c.pin, got, want)
			continue
		}
		h.t.Logf("ok: IDPBENCH_PIN=%q: the run exports %q", c.pin, got)
	}
}

// composePlacement: with a server set every service of Hydra's compose file
// gets it as its cpuset in the override every compose command adds; none
// is written without a server set.
func composePlacement(h *harness, server string) {
	st := filepath.Join(h.work, "compose-state")
	if err := os.MkdirAll(filepath.Join(st, "secrets"), 0o700); err != nil {
		h.t.Fatal(err)
	}
	const rel = "products/hydra/compose.yml"
	yml := filepath.Join(h.root, filepath.FromSlash(rel))
	override := filepath.Join(st, "compose.placement.yml")
	args := lines(h.bash(nil, `printf 'COMPOSE_FILE=%q\n' "$3" >"$1/state.env"
		source "$IDPBENCH_ROOT/scripts/lib/adapter.sh"
		IDPBENCH_SERVER_CPUS="$2" compose_placement "$1"
		compose_override_args "$1"`, st, server, yml))
	if !slices.Equal(args, []string{"-f", override}) {
		h.t.Fatalf("compose: want the override added to the compose commands, got %q", args)
	}
	var got strings.Builder
	for _, l := range lines(readFile(h.t, override)) {
		if !strings.HasPrefix(l, "#") {
			got.WriteString(l + "\n")
		}
	}
	want := ""
	for _, svc := range []string{"postgres", "hydra-migrate", "hydra"} {
		want += fmt.Sprintf("  %s:\n    cpuset: %q\n", svc, server)
	}
	if want = "services:\n" + want; got.String() != want {
		h.t.Fatalf("compose: %s does not give every service of %s cpuset %s:\n%s\nwant:\n%s", override, rel, server, got.String(), want)
	}
	h.bash(nil, `source "$IDPBENCH_ROOT/scripts/lib/adapter.sh"; IDPBENCH_SERVER_CPUS="" compose_placement "$1"`, st)
	if _, err := os.Stat(override); !os.IsNotExist(err) {
		h.t.Fatalf("compose: an override was written without a server set (%v)", err)
	}
	h.t.Logf("ok: compose: every service of %s gets cpuset %q; none without a server set", rel, server)
}

// The processes whose CPUs placementRun checks, each of which it must see.
const (
	seenLoadstep   = "loadstep"
	seenSampler    = "sampler"
	seenRefop      = "the reference OP's process tree"
	seenPostmaster = "PostgreSQL's postmaster"
	seenPGChild    = "a PostgreSQL child of the postmaster"
	seenBackend    = "a PostgreSQL client backend"
)

// placementRun: a real run, the reference OP and PostgreSQL on CPU server,
// the load generator and the sampler on CPU driver, watched from /proc;
// then the meta's placement and the report's line.
func placementRun(h *harness, driver, server string, hostCPUs int) {
	results := filepath.Join(h.work, "results")
	env := h.with("IDPBENCH_TMP="+h.work, "IDPBENCH_RESULTS="+results, "IDPBENCH_SCENARIOS=discovery",
		"IDPBENCH_LADDER=2", "IDPBENCH_WARMUP_S=1", "IDPBENCH_DURATION_S=4", "IDPBENCH_GCJITTER_S=3", "IDPBENCH_REUSE_POOL=8")
	state := run.StateDir(h.work, "placement", filepath.Join(results, "placement"))
	runLog := filepath.Join(h.work, "run.log")
	run := h.start(env, runLog, h.script("run-comparison.sh"),
		"--quick", "--repeats", "1", "--only", "refop", "--run-id", "placement", "--driver-cpus", driver, "--server-cpus", server)
	w := &affinityWatch{h: h, seen: map[string]bool{}}
	for run.running() {
		w.look(run.pid(), state, driver, server)
		time.Sleep(200 * time.Millisecond)
	}
	if code := run.wait(); code != 0 {
		h.t.Fatalf("run-comparison.sh exited %d (log: %s): %s", code, runLog, tail(readFile(h.t, runLog), 5))
	}
	for _, what := range []string{seenLoadstep, seenSampler, seenRefop, seenPostmaster, seenPGChild, seenBackend} {
		if !w.seen[what] {
			h.t.Errorf("%s was never seen while the run ran (log: %s)", what, runLog)
		}
	}
	if h.t.Failed() {
		return
	}
	h.t.Log("ok: every process looked at ran on its side's CPUs")

	runDir := filepath.Join(results, "placement")
	meta := readMeta(h.t, filepath.Join(runDir, "refop", "meta.json"))
	want := schema.Placement{Mode: schema.PlacementPinned, DriverCPUs: driver, ServerCPUs: server, HostCPUs: hostCPUs}
	if meta.Placement == nil || *meta.Placement != want {
		h.t.Fatalf("refop meta.json: want placement %+v, got %+v", want, meta.Placement)
	}
	line := fmt.Sprintf("- Placement: load generator and sampler on CPUs %s, product and PostgreSQL on CPUs %s (pinned; %d CPUs)", driver, server, hostCPUs)
	if !slices.Contains(lines(readFile(h.t, filepath.Join(runDir, "COMPARISON.md"))), line) {
		h.t.Fatalf("COMPARISON.md: no line %q", line)
	}
	h.t.Logf("ok: meta.json placement %+v; the report says so", *meta.Placement)
	hostProbeOnce(h.t, runDir)
}

// hostProbeOnce: the host probe runs in one sampler for the whole run
// (RUN_DIR/host-samples-*.jsonl, host records with probe_us), never in a
// product's (internal/run's startHostSampler).
func hostProbeOnce(t *testing.T, runDir string) {
	probes := func(glob string) (files, host, probed int, sources map[string]bool) {
		names, _ := filepath.Glob(filepath.Join(runDir, glob))
		sources = map[string]bool{}
		for _, f := range names {
			files++
			for _, l := range lines(readFile(t, f)) {
				var s schema.Sample
				if err := json.Unmarshal([]byte(l), &s); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				sources[s.Source] = true
				if s.Source == "host" {
					host++
					if s.ProbeUS != nil {
						probed++
					}
				}
			}
		}
		return files, host, probed, sources
	}
	files, host, probed, sources := probes("host-samples-*.jsonl")
	if files != 1 || host == 0 || probed != host || len(sources) != 1 {
		t.Fatalf("%s: want one host-samples-*.jsonl of host records, each with probe_us; got %d files, %d host records (%d with probe_us), sources %v", runDir, files, host, probed, slices.Sorted(maps.Keys(sources)))
	}
	pfiles, phost, pprobed, psources := probes("refop/samples-*.jsonl")
	if pfiles == 0 || phost == 0 || pprobed != 0 || !psources["process:refop"] {
		t.Fatalf("%s/refop: want samples of process:refop and host records without probe_us; got %d files, %d host records (%d with probe_us), sources %v", runDir, pfiles, phost, pprobed, slices.Sorted(maps.Keys(psources)))
	}
	t.Logf("ok: the host probe ran once for the run (%d records), refop's sampler without it (%d host records)", probed, phost)
}

// affinityWatch checks the CPUs of a run's processes as they come and go.
type affinityWatch struct {
	h     *harness
	seen  map[string]bool // what has been checked at least once
	psql  bool            // the client session is started
	pgDir string          // PostgreSQL's directory (of its pg.env)
}

// look checks every process of the run once: the load generator's and the
// sampler on driver, the reference OP's tree and PostgreSQL's on server.
func (w *affinityWatch) look(runPID int, state, driver, server string) {
	ps := scanProcesses(w.h.t)
	for _, p := range ps.descendants(runPID) {
		if c := ps.comm(p); c == "loadstep" || c == "mintpool" {
			w.check(c, p, driver)
		}
	}
	// a sampler per product, up while the product is (internal/run's proc.go)
	pidfiles, _ := filepath.Glob(filepath.Join(state, "pids", "sampler-*.pid"))
	for _, f := range pidfiles {
		if p := pidfilePID(f); p > 0 {
			w.check(seenSampler, p, driver)
		}
	}
	if p := pidfilePID(filepath.Join(state, "refop", "pids", "refop.pid")); p > 0 {
		for _, c := range append(ps.group(p), ps.descendants(p)...) {
			w.check(seenRefop, c, server)
		}
	}
	pm := pidfilePID(filepath.Join(state, "pids", "postgres.pid"))
	if pm == 0 {
		return
	}
	w.check(seenPostmaster, pm, server)
	for _, c := range ps.children(pm) {
		w.check(seenPGChild, c, server)
	}
	w.backend(pm, server)
}

// backend holds a client session open for the run (psql) and checks the
// backend serving it.
func (w *affinityWatch) backend(postmaster int, server string) {
	if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", postmaster)); err == nil {
		w.pgDir = filepath.Dir(cwd) // the postmaster runs in PG_DIR/data
	}
	env := w.h.with("IDPBENCH_PG_DIR=" + w.pgDir)
	if !w.psql {
		if fi, err := os.Stat(filepath.Join(w.pgDir, "pg.env")); err != nil || fi.Size() == 0 {
			return
		}
		w.h.start(env, filepath.Join(w.h.work, "psql.log"), "bash", "-c",
			`source "$1/scripts/lib/common.sh"; source "$1/scripts/lib/postgres.sh"; pg_psql postgres -c "SELECT pg_sleep(60) /* idpbench-placement */"`,
			"bash", w.h.root)
		w.psql = true
	}
	if w.seen[seenBackend] {
		return
	}
	out, _ := w.h.try(env, `source "$IDPBENCH_ROOT/scripts/lib/postgres.sh"
		pg_psql postgres -At -c "SELECT pid FROM pg_stat_activity WHERE query LIKE '%idpbench-placement */' AND pid <> pg_backend_pid()"`)
	for _, f := range strings.Fields(out) {
		if pid, err := strconv.Atoi(f); err == nil {
			w.check(seenBackend, pid, server)
		}
	}
}

// check fails the test unless pid runs on the CPUs want; a process gone
// since it was listed is skipped.
func (w *affinityWatch) check(what string, pid int, want string) {
	got, ok := cpusAllowed(pid)
	if !ok {
		return
	}
	if got != want {
		w.h.t.Fatalf("%s (pid %d, %.80s): Cpus_allowed_list %s, want %s", what, pid, cmdline(pid), got, want)
	}
	if !w.seen[what] {
		w.h.t.Logf("ok: %s (pid %d) on CPUs %s", what, pid, got)
	}
	w.seen[what] = true
}

// readMeta decodes a meta.json; it fails the test when it cannot.
func readMeta(t *testing.T, path string) *schema.Meta {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := schema.DecodeMeta(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// lines splits text into its lines (no empty last one).
func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
