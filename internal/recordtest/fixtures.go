// Package recordtest makes result records for tests: synthetic steps whose
// histograms are genuine (latencies drawn from a log-normal distribution
// and recorded), sampler records, cold starts and phases. It writes the
// fixture run that internal/model's and internal/report's tests read
// (internal/model/testdata, TestFixtures), the repeated ladders of
// Repeats, and single windows (RoundStep, ShareStep). It imports no
// package that builds a report, so those packages' own tests can use it.
package recordtest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// stepSpec describes one synthetic step: latencies drawn from a log-normal
// distribution are recorded into real histograms, so every histogram field
// of the fixture is genuine.
type stepSpec struct {
	file                string // path under testdata/
	product, version    string
	scenario, target    string
	c                   int
	qps                 float64 // requests/s to record
	p50ms, sigma        float64 // log-normal median (ms) and shape
	errRate             float64 // fraction of requests failed (non-2xx)
	limited             bool
	status, phase       string
	durationS, interval float64
	start               time.Time
	schemaString        string   // "" = StepV1
	gapAt               int      // 1-based index of an interval left out (a gap); 0 = none
	names               []string // an iteration step: its request names (each takes an equal share of the latency)
	check               string   // the rule it was judged by: "" = the scenario's, noCheck = none recorded (an older loadstep)
}

// noCheck in stepSpec.check makes a step without the check field, as
// loadstep wrote them before it existed.
const noCheck = "(none)"

var FixtureStart = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// fixtureSpecs is the synthetic run: hydra and keycloak ladders, zitadel N/A.
func fixtureSpecs() []stepSpec {
	at := func(min int) time.Time { return FixtureStart.Add(time.Duration(min) * 20 * time.Second) }
	h := func(sc string, c int, qps, p50 float64) stepSpec {
		return stepSpec{file: fmt.Sprintf("run1/hydra/%s-c%d.json", sc, c), product: "hydra", version: "v2.3.0",
			scenario: sc, target: HydraURL(sc), c: c, qps: qps, p50ms: p50, sigma: 0.35, phase: steps.PhaseLadder}
	}
	k := func(sc string, c int, qps, p50 float64) stepSpec {
		return stepSpec{file: fmt.Sprintf("run1/keycloak/%s-c%d.json", sc, c), product: "keycloak", version: "26.0.7",
			scenario: sc, target: keycloakURL(sc), c: c, qps: qps, p50ms: p50, sigma: 0.45, phase: steps.PhaseLadder}
	}
	specs := []stepSpec{
		h("discovery", 2, 4100, 0.45), h("discovery", 4, 7900, 0.5), h("discovery", 8, 12400, 0.62),
		with(h("discovery", 16, 13100, 1.1), func(s *stepSpec) { s.limited = true }),
		h("client_credentials", 2, 210, 9.4), h("client_credentials", 4, 395, 10.1),
		with(h("client_credentials", 8, 420, 18.5), func(s *stepSpec) { s.errRate = 0.023 }),
		h("refresh", 2, 150, 13), h("refresh", 4, 260, 15),
		with(h("refresh", 8, 300, 26), func(s *stepSpec) { s.status = schema.StatusInterrupted; s.durationS = 6 }),
		k("userinfo", 2, 1800, 1.05), k("userinfo", 4, 3300, 1.2), k("userinfo", 8, 4700, 1.65),
		with(k("introspect", 2, 900, 2.1), func(s *stepSpec) { s.errRate = 0.004 }),
		with(k("introspect", 4, 1600, 2.4), func(s *stepSpec) { s.errRate = 0.012 }),
		with(k("introspect", 8, 2100, 3.6), func(s *stepSpec) { s.errRate = 0.05 }),
		with(k("discovery", 2, 6000, 0.3), func(s *stepSpec) { s.limited = true }),
		with(k("discovery", 4, 6500, 0.55), func(s *stepSpec) { s.limited = true }),
		with(k("userinfo", 32, 4600, 6.8), func(s *stepSpec) {
			s.file, s.phase, s.durationS, s.interval = "run1/keycloak/gcjitter.json", steps.PhaseGCJitter, 60, 10
		}),
		with(h("discovery", 2, 4000, 0.45), func(s *stepSpec) {
			s.file, s.schemaString = "v2/hydra/discovery-c2.json", "idpbench.step/v2"
		}),
		with(h("client_credentials", 32, 380, 80), func(s *stepSpec) {
			s.file, s.phase, s.durationS, s.interval, s.gapAt = "run1/hydra/gcjitter.json", steps.PhaseGCJitter, 60, 10, 4
		}),
		with(k("auth_code", 2, 14, 140), func(s *stepSpec) { s.names = keycloakLogin() }),
		with(k("auth_code", 4, 22, 180), func(s *stepSpec) { s.names = keycloakLogin() }),
		with(h("client_credentials_login", 2, 180, 11), func(s *stepSpec) { s.names = ccLogin() }),
		with(h("client_credentials_login", 4, 260, 15), func(s *stepSpec) { s.names = ccLogin() }),
		// Judged by a looser rule than the scenario's (any 2xx userinfo, as
		// loadstep's removed --userinfo-check 2xx did): never a number.
		with(k("client_credentials_login", 2, 900, 4), func(s *stepSpec) { s.names, s.check = ccLogin(), schema.Check2xx }),
		// A step of a loadstep before Step.Check: its rule is unknown.
		with(h("introspect", 2, 2300, 0.8), func(s *stepSpec) { s.check = noCheck }),
	}
	for i := range specs {
		specs[i].start = at(i)
	}
	return specs
}

func keycloakLogin() []string { return []string{"login_authorize", "login_submit", "oidc_token"} }
func ccLogin() []string       { return []string{"oidc_token", "oidc_user_info"} }

func with(s stepSpec, f func(*stepSpec)) stepSpec {
	f(&s)
	return s
}

func HydraURL(sc string) string {
	paths := map[string]string{"discovery": "/.well-known/openid-configuration", "userinfo": "/userinfo",
		"introspect": "/admin/oauth2/introspect"}
	if p, ok := paths[sc]; ok {
		return "http://127.0.0.1:4444" + p
	}
	return "http://127.0.0.1:4444/oauth2/token"
}

func keycloakURL(sc string) string {
	base := "http://127.0.0.1:8080/realms/bench"
	paths := map[string]string{"discovery": "/.well-known/openid-configuration",
		"userinfo": "/protocol/openid-connect/userinfo", "introspect": "/protocol/openid-connect/token/introspect"}
	if p, ok := paths[sc]; ok {
		return base + p
	}
	return base + "/protocol/openid-connect/token"
}

// synthStep records the spec's latencies into real histograms.
func synthStep(t testing.TB, sp stepSpec, seed uint64) *schema.Step {
	t.Helper()
	dur, iv := cmpOr(sp.durationS, 10), cmpOr(sp.interval, 2)
	rng := rand.New(rand.NewPCG(seed, 0x1dbe))
	overall := schema.NewHistogram()
	s := &schema.Step{
		Schema: cmpStr(sp.schemaString, schema.StepV1), ToolVersion: "v0.1.0-fixture",
		Product: sp.product, ProductVersion: sp.version, Scenario: sp.scenario,
		TargetURL: sp.target, Connections: sp.c, WarmupS: 5, DurationS: dur, IntervalS: iv, TimeoutS: 10,
		Start: sp.start, End: sp.start.Add(time.Duration(dur * float64(time.Second))),
		Status: cmpStr(sp.status, schema.StatusComplete), LatencyModel: schema.ModelClosedLoop,
		Check:  cmpStr(sp.check, schema.ScenarioCheck(sp.scenario)),
		Labels: map[string]string{"phase": sp.phase},
		Host:   schema.Host{CPUs: 2, Kernel: "6.8.0-45-generic", Go: "go1.26.8", OS: "linux/amd64", Hostname: "bench1"},
	}
	if sp.check == noCheck {
		s.Check = ""
	}
	perInterval := int64(math.Round(sp.qps * iv))
	for i, ts := 1, 0.0; ts < dur-1e-9; i, ts = i+1, ts+iv {
		if i == sp.gapAt {
			continue
		}
		h := schema.NewHistogram()
		for range perInterval {
			ns := int64(sp.p50ms * 1e6 * math.Exp(sp.sigma*rng.NormFloat64()))
			if err := h.RecordValue(max(ns, 1)); err != nil {
				t.Fatal(err)
			}
		}
		errs := int64(math.Round(float64(perInterval) * sp.errRate))
		overall.Merge(h)
		s.Intervals = append(s.Intervals, interval(t, h, ts, iv, errs))
		s.Requests += perInterval
		s.Errors.Non2xx += errs
	}
	finishStep(t, s, overall, sp)
	if len(sp.names) > 0 {
		named(t, s, sp, rng)
	}
	return s
}

// named makes s an iteration step: every name was sent once per iteration
// and took an equal share of its latency (all succeeded).
func named(t testing.TB, s *schema.Step, sp stepSpec, rng *rand.Rand) {
	s.CountUnit, s.RequestOrder, s.RequestsByName = schema.CountIterations, sp.names, map[string]schema.NamedRequests{}
	s.StatusCodes = map[string]int64{}
	for _, name := range sp.names {
		h := schema.NewHistogram()
		for range s.Requests {
			ns := int64(sp.p50ms / float64(len(sp.names)) * 1e6 * math.Exp(sp.sigma*rng.NormFloat64()))
			if err := h.RecordValue(max(ns, 1)); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := schema.EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		code := "200"
		if name == "login_submit" {
			code = "302"
		}
		s.RequestsByName[name] = schema.NamedRequests{Requests: s.Requests, OK: s.Requests,
			StatusCodes: map[string]int64{code: s.Requests}, LatencyMS: schema.Summarize(h), Histogram: enc}
		s.StatusCodes[code] += s.Requests
		s.HTTPRequests += s.Requests
	}
}

func interval(t testing.TB, h *hdrhistogram.Histogram, ts, length float64, errs int64) schema.Interval {
	enc, err := schema.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	lat := schema.Summarize(h)
	return schema.Interval{TS: ts, LengthS: length, Requests: h.TotalCount(), Errors: errs,
		QPS: float64(h.TotalCount()) / length, P50MS: lat.P50, P99MS: lat.P99, MaxMS: lat.Max, Histogram: enc}
}

func finishStep(t testing.TB, s *schema.Step, overall *hdrhistogram.Histogram, sp stepSpec) {
	enc, err := schema.EncodeHistogram(overall)
	if err != nil {
		t.Fatal(err)
	}
	s.Histogram, s.LatencyMS = enc, schema.Summarize(overall)
	s.OK = s.Requests - s.Errors.Total()
	s.StatusCodes = map[string]int64{"200": s.OK}
	if s.Errors.Non2xx > 0 {
		s.StatusCodes["503"] = s.Errors.Non2xx
	}
	s.ErrorRate = float64(s.Errors.Total()) / float64(s.Requests)
	s.QPS = float64(s.Requests) / s.DurationS
	pct := 60.0
	if sp.limited {
		pct = 170
	}
	s.Driver = schema.Driver{CPUS: pct / 100 * s.DurationS, CPUPct: pct, GOMAXPROCS: 2,
		Limited: sp.limited, HostCPUPct: 97}
}

func cmpOr(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

func cmpStr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// fixtureRecords are the non-step records of run1, keyed by path under testdata/.
func fixtureRecords() map[string]any {
	db := map[string]string{"version": "PostgreSQL 15.10", "max_connections": "200", "shared_buffers": "256MB"}
	return map[string]any{
		"run1/hydra/meta.json": schema.Meta{
			Schema: schema.MetaV1, Product: "hydra", ProductVersion: "v2.3.0", Status: schema.MetaOK,
			ScenarioNA: map[string]string{"auth_code": "the headless login needs a login/consent app this run does not provide"},
			ConfigSources: []schema.Link{{What: "Hydra configuration reference",
				URL: "https://www.ory.sh/docs/hydra/reference/configuration"}},
			Settings:   map[string]string{"DSN max_conns": "25", "strategies.access_token": "opaque"},
			Deviations: []schema.Note{{What: "log.level=warn", Why: "info logs two lines per request"}},
			Facts: []schema.Fact{
				{Name: "client secret hashing", Value: "pbkdf2-sha256, 25000 iterations, 32-byte key", Source: schema.FactRead,
					From: "hydra database: hydra_client.client_secret of bench-svc (its parameters only)"},
				{Name: "refresh token rotation", Value: "on: every refresh token is single-use", Source: schema.FactDocumented,
					From: "https://www.ory.sh/docs/hydra/guides/graceful-token-refresh"}},
			Known: []schema.Known{{Scenario: "discovery", What: "discovery is serialised on a per-key-set write lock",
				Ref: "https://github.com/ory/hydra/issues/3863"}},
			Pools: []schema.PoolInfo{{Scenario: "refresh", Kind: "refresh_token", Mode: "chain", Size: 64,
				Flow: "admin-accept"}},
			Database: db, Start: FixtureStart, End: FixtureStart.Add(10 * time.Minute),
		},
		"run1/keycloak/meta.json": schema.Meta{
			Schema: schema.MetaV1, Product: "keycloak", ProductVersion: "26.0.7", Status: schema.MetaOK,
			ScenarioNA: map[string]string{"jwt_bearer": "Keycloak has no RFC 7523 authorization grant without token exchange"},
			ConfigSources: []schema.Link{{What: "Keycloak production configuration",
				URL: "https://www.keycloak.org/server/configuration-production"}},
			Settings: map[string]string{"db-pool-max-size": "100", "JAVA_OPTS_KC_HEAP": "-XX:MaxRAMPercentage=70"},
			Facts: []schema.Fact{{Name: "password hashing", Value: "argon2, 5 iterations, memory 7168 KiB, parallelism 1, type id (21 credentials)",
				Source: schema.FactRead, From: "keycloak database: credential.credential_data of all 21 password credentials"}},
			Warmups:  []schema.Warmup{{WarmupS: 60, Why: "JIT compilation: the first minute runs interpreted code"}},
			Database: db,
		},
		"run1/zitadel/meta.json": schema.Meta{
			Schema: schema.MetaV1, Product: "zitadel", Status: schema.MetaNA,
			NAReason: "no Docker engine on this machine and the release binary needs one for its login UI",
		},
		"run1/keycloak/coldstart-A.json": schema.Coldstart{
			Schema: schema.ColdstartV1, Product: "keycloak", ProductVersion: "26.0.7", Mode: "A", Start: FixtureStart,
			SecondsToReady: 38.2, PeakRSSBytes: 912 << 20, ReadyURL: "http://127.0.0.1:9000/health/ready",
			ReadyStatus: 200, Command: []string{"kc.sh", "start"}, Status: schema.StatusComplete,
		},
		"run1/keycloak/coldstart-B.json": schema.Coldstart{
			Schema: schema.ColdstartV1, Product: "keycloak", ProductVersion: "26.0.7", Mode: "B",
			Start: FixtureStart.Add(time.Minute), SecondsToReady: 300, PeakRSSBytes: 850 << 20,
			ReadyURL: "http://127.0.0.1:9000/health/ready", ReadyStatus: 200, Command: []string{"kc.sh", "start"},
			Status: schema.StatusError, Error: "not ready within 5m0s (last: HTTP 503)",
		},
		"run1/hydra/coldstart-A.json": hydraColdstart("A", 3.42, 61<<20),
		"run1/hydra/coldstart-B.json": hydraColdstart("B", 0.87, 43<<20),
		"run1/notes.json":             map[string]any{"schema": "otherbench.notes/v3", "text": "not an idpbench record"},
	}
}

func hydraColdstart(mode string, s float64, rss int64) schema.Coldstart {
	return schema.Coldstart{Schema: schema.ColdstartV1, Product: "hydra", ProductVersion: "v2.3.0", Mode: mode,
		Start: FixtureStart, SecondsToReady: s, PeakRSSBytes: rss, ReadyURL: "http://127.0.0.1:4445/health/ready",
		ReadyStatus: 200, Command: []string{"hydra", "serve", "all"}, Status: schema.StatusComplete}
}

// phaseLoad is what the processes use during one part of the synthetic run.
type phaseLoad struct {
	from, to           int     // seconds after FixtureStart, both included
	idp, db, host, tps float64 // CPU in percent of one core (host: of all cores), transactions/s
	conns              int
}

// HydraLoad makes each of hydra's steady-state windows show a different
// bottleneck: discovery c=8 the IdP, client_credentials c=4 the shared
// host, refresh c=4 the database. Outside the listed spans the stack idles.
func HydraLoad() []phaseLoad {
	return []phaseLoad{
		{0, 70, 172, 3, 97, 0.4, 2},
		{80, 130, 95, 58, 94, 410, 12},
		{140, 186, 42, 171, 99, 880, 25},
	}
}

// keycloakLoad: userinfo c=8 (240-250 s) leaves CPU to spare.
func keycloakLoad() []phaseLoad {
	return []phaseLoad{{200, 250, 70, 0, 48, 0, 0}, {260, 350, 120, 0, 80, 0, 0}}
}

func loadAt(phases []phaseLoad, sec int) phaseLoad {
	for _, p := range phases {
		if sec >= p.from && sec <= p.to {
			return p
		}
	}
	return phaseLoad{idp: 2, db: 1, host: 6, tps: 0.2, conns: 2}
}

// HydraSamples: process:hydra, postgres and host records (with steal) every
// second for the whole ladder run, the last postgres record with the top
// queries.
func HydraSamples() []schema.Sample {
	var out []schema.Sample
	const end = 200
	for sec := 0; sec <= end; sec++ {
		t, l, wob := FixtureStart.Add(time.Duration(sec)*time.Second), loadAt(HydraLoad(), sec), float64(sec%5-2)
		out = append(out,
			schema.Sample{Schema: schema.SampleV1, T: t, Source: "process:hydra", RSSBytes: int64(78+sec/20) << 20,
				CPUPct: l.idp + wob, Threads: 14, Processes: 1},
			schema.Sample{Schema: schema.SampleV1, T: t, Source: "postgres", RSSBytes: int64(140+sec/10) << 20,
				CPUPct: l.db + wob/2, Threads: int64(9 + l.conns), Processes: 9 + l.conns, XactPerS: l.tps + wob,
				RowsPerS: 3 * l.tps, Connections: l.conns},
			schema.Sample{Schema: schema.SampleV1, T: t, Source: "host", CPUPct: l.host + wob/2,
				StealPct: new(float64(1 + sec%3))}) // a neighbour takes 1-3% of the cores
	}
	out[len(out)-2].TopQueries = hydraTopQueries()
	return out
}

func hydraTopQueries() []schema.Query {
	return []schema.Query{
		{Query: "INSERT INTO hydra_oauth2_access (signature, request_id, requested_at, client_id, scope, granted_scope, form_data, session_data, subject, active, requested_audience, granted_audience, challenge_id, nid, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
			Calls: 41200, TotalMS: 18234.5, MeanMS: 0.443},
		{Query: "SELECT * FROM hydra_client WHERE id = $1 AND nid = $2", Calls: 52000, TotalMS: 9120.25, MeanMS: 0.175},
		{Query: "UPDATE hydra_oauth2_refresh SET active = false WHERE request_id = $1 AND nid = $2 AND scope || $3 <> ''", Calls: 2600, TotalMS: 2210, MeanMS: 0.85},
		{Query: "SELECT `quoted` FROM networks", Calls: 10, TotalMS: 1.5, MeanMS: 0.15},
	}
}

// keycloakSamples: both of Keycloak's process trees (kc.sh and its JVM
// child) and the host, no PostgreSQL: the database section is N/A.
func keycloakSamples() []schema.Sample {
	var out []schema.Sample
	for sec := 200; sec <= 350; sec++ {
		t, l, wob := FixtureStart.Add(time.Duration(sec)*time.Second), loadAt(keycloakLoad(), sec), float64(sec%3-1)
		out = append(out,
			schema.Sample{Schema: schema.SampleV1, T: t, Source: "process:keycloak", RSSBytes: int64(690+sec/50) << 20,
				CPUPct: l.idp + wob, Threads: 120, Processes: 2},
			schema.Sample{Schema: schema.SampleV1, T: t, Source: "process:keycloak-java", RSSBytes: int64(686+sec/50) << 20,
				CPUPct: l.idp + wob, Threads: 118, Processes: 1},
			schema.Sample{Schema: schema.SampleV1, T: t, Source: "host", CPUPct: l.host + wob})
	}
	return out
}

// fixtureSampleFiles are the sampler files of run1, keyed by path under testdata/.
func fixtureSampleFiles() map[string][]schema.Sample {
	return map[string][]schema.Sample{
		"run1/hydra/samples.jsonl":                     HydraSamples(),
		"run1/keycloak/samples-20261130T100320Z.jsonl": keycloakSamples(),
	}
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeFixtures writes the synthetic run's records under dir.
func writeFixtures(t *testing.T, dir string) {
	for i, sp := range fixtureSpecs() {
		writeJSON(t, filepath.Join(dir, sp.file), synthStep(t, sp, uint64(i+1)))
	}
	for path, rec := range fixtureRecords() {
		writeJSON(t, filepath.Join(dir, path), rec)
	}
	for path, samples := range fixtureSampleFiles() {
		writeSampleFile(t, filepath.Join(dir, path), samples)
	}
	writeLines(t, filepath.Join(dir, "run1", schema.PhasesFile), fixturePhases())
}

// fixturePhases is run1's phases.jsonl: one session that ran hydra up to
// its refresh ladder and was interrupted there (the refresh c=8 step is
// interrupted); the EXIT trap's cleanup is its last phase. Keycloak's
// steps lie in no phase of this file.
func fixturePhases() []schema.Phase {
	const session = "20261130T095730Z-4242"
	p := func(product, kind, name string, from, to float64) schema.Phase {
		at := func(s float64) time.Time { return FixtureStart.Add(time.Duration(s * float64(time.Second))) }
		return schema.NewPhase(session, product, kind, name, at(from), at(to))
	}
	return []schema.Phase{
		p("", schema.PhaseKindBuild, "build tools", -150, -121.5),
		p("", schema.PhaseKindDatabase, "PostgreSQL up", -121.5, -117),
		p("hydra", schema.PhaseKindInstall, "hydra install", -117, -112),
		p("hydra", schema.PhaseKindColdstart, "hydra up (cold start A: fresh database)", -112, -104),
		p("hydra", schema.PhaseKindColdstart, "hydra restart (cold start B: initialised database)", -104, -101),
		p("hydra", schema.PhaseKindSetup, "hydra setup", -101, -8),
		p("hydra", schema.PhaseKindLadder, "hydra ladder discovery", -8, 72),
		p("hydra", schema.PhaseKindLadder, "hydra ladder client_credentials", 72, 133),
		p("hydra", schema.PhaseKindLadder, "hydra ladder refresh", 133, 187),
		p("hydra", schema.PhaseKindTeardown, "cleanup (exit 130)", 187, 193.25),
	}
}

// writeLines writes records as JSON lines.
func writeLines[T any](t *testing.T, path string, records []T) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, r := range records {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
}

func writeSampleFile(t *testing.T, path string, samples []schema.Sample) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, s := range samples {
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
	}
}
