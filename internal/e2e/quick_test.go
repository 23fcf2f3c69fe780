package e2e

import (
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
)

// TestE2EQuickRun checks the quick comparison scripts/test.sh has just run,
// its run directory IDPBENCH_E2E_RUN.
func TestE2EQuickRun(t *testing.T) {
	dir := need(t, "IDPBENCH_E2E_RUN")[0]
	r := loaded(t, dir)
	for _, c := range QuickChecks(zitadelFromEnv()) {
		t.Run(c.Name, func(t *testing.T) {
			ok, err := c.Run(r)
			if err != nil {
				t.Fatal(err)
			}
			t.Log("ok: " + ok)
		})
	}
}

// zitadelFromEnv is what the run's Zitadel rows must show, from the
// environment the comparison ran in (products/zitadel/adapter's rule).
func zitadelFromEnv() Zitadel {
	bin := os.Getenv("ZITADEL_BIN")
	switch {
	case bin == "" && exec.Command("docker", "info").Run() != nil:
		return ZitadelUnavailable
	case bin != "" && os.Getenv("IDPBENCH_MODE") != "compose":
		return ZitadelNative
	}
	return ZitadelMeasured
}

// fixture is a run directory the checks are tested on.
type fixture struct {
	name, dir string
	zitadel   Zitadel
	// predates are the checks of records the run was measured before:
	// each must fail on it, saying the records are missing.
	predates map[string]string
}

// fixtures are the committed reference run (no ZITADEL_BIN, no Docker
// engine) and the run IDPBENCH_E2E_RUN names, when set.
func fixtures() []fixture {
	// results/reference (676ccb3) has every record the checks read,
	// the windows at shares of capacity included.
	// Its COMPARISON.md predates the sustain rule: it shows a P99 for
	// refop's refresh at 80%, a window whose queue grew.
	fs := []fixture{{"reference", filepath.Join("..", "..", "results", "reference"), ZitadelUnavailable, map[string]string{
		"sustained": "refop refresh: P99 at 80% is \"588 [358, 684]\", but the window",
		// It predates the interleaved schedule: its round 2 ran product
		// after product, minutes apart, without twins.
		"interleaved round": "no A/A twin window",
	}}}
	if dir := os.Getenv("IDPBENCH_E2E_RUN"); dir != "" {
		fs = append(fs, fixture{"IDPBENCH_E2E_RUN", dir, zitadelFromEnv(), nil})
	}
	return fs
}

var (
	runsMu sync.Mutex
	runs   = map[string]*Run{}
)

// loaded returns the run directory dir, loaded once per test binary:
// loading and building the report of a full run takes seconds, under -race
// tens of them. Tests change Clones of it only.
func loaded(t *testing.T, dir string) *Run {
	t.Helper()
	runsMu.Lock()
	defer runsMu.Unlock()
	if r := runs[dir]; r != nil {
		return r
	}
	r, err := LoadRun(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	runs[dir] = r
	return r
}

// checkNamed is the check of QuickChecks(z) called name.
func checkNamed(t *testing.T, z Zitadel, name string) Check {
	t.Helper()
	cs := QuickChecks(z)
	i := slices.IndexFunc(cs, func(c Check) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no check %q", name)
	}
	return cs[i]
}

// TestQuickChecksHold: every check holds on the fixtures.
func TestQuickChecksHold(t *testing.T) {
	for _, f := range fixtures() {
		r := loaded(t, f.dir)
		for _, c := range QuickChecks(f.zitadel) {
			ok, err := c.Run(r)
			if want, ok := f.predates[c.Name]; ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s predates %q: got %v, want an error saying %q", f.name, c.Name, err, want)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %s: %v", f.name, c.Name, err)
				continue
			}
			t.Logf("%s: %s: %s", f.name, c.Name, ok)
		}
	}
}

// doctoring is a change to a run that one check must fail on.
type doctoring struct {
	name  string
	check string // the check that must fail
	want  string // in its error
	files bool   // doctor changes files: on a copy of the run directory
	// doctor changes r, a Clone: it replaces the records it changes (a
	// changed copy), never writes through a shared pointer or map.
	doctor func(t *testing.T, r *Run)
}

// TestQuickChecksFail: each check fails on a run doctored to break it,
// saying what it wanted.
func TestQuickChecksFail(t *testing.T) {
	for _, f := range fixtures() {
		base := loaded(t, f.dir)
		for _, d := range doctorings() {
			t.Run(f.name+"/"+d.name, func(t *testing.T) {
				r := base.Clone()
				if d.files {
					r.Dir = t.TempDir()
					if err := os.CopyFS(r.Dir, os.DirFS(base.Dir)); err != nil {
						t.Fatal(err)
					}
				}
				if _, ok := f.predates[d.check]; ok {
					t.Skipf("%s predates the records of %q (it fails already)", f.name, d.check)
				}
				d.doctor(t, r)
				_, err := checkNamed(t, f.zitadel, d.check).Run(r)
				if err == nil || !strings.Contains(err.Error(), d.want) {
					t.Fatalf("check %q: got %v, want an error saying %q", d.check, err, d.want)
				}
				t.Logf("%s: %v", d.check, err)
			})
		}
	}
}

func doctorings() []doctoring {
	return []doctoring{
		{"a window's verdict recorded against the rule", "sustained", "the rule judges", false, func(t *testing.T, r *Run) {
			for _, rel := range slices.Sorted(maps.Keys(r.Steps)) {
				if s := r.Steps[rel]; s.RateRPS > 0 && s.Sustain != nil {
					editStep(t, r, rel, func(s *schema.Step) {
						v := *s.Sustain
						v.Verdict = map[string]string{schema.SustainYes: schema.SustainNo}[v.Verdict]
						if v.Verdict == "" {
							v.Verdict = schema.SustainYes
						}
						s.Sustain = &v
					})
					return
				}
			}
			t.Fatal("no rate-mode window with a recorded verdict")
		}},
		{"no COMPARISON.md", "COMPARISON.md", "no COMPARISON.md in", false, func(t *testing.T, r *Run) {
			r.Comparison = ""
		}},
		{"hydra S3 with a failed request", "hydra numbers", "hydra S3: want numbers with zero errors", false, func(t *testing.T, r *Run) {
			editCell(t, r, "hydra", "S3", func(c *model.CellRow) { c.Failed = 1 })
		}},
		{"keycloak S2l N/A", "keycloak numbers", "keycloak S2l: want numbers with zero errors", false, func(t *testing.T, r *Run) {
			editCell(t, r, "keycloak", "S2l", func(c *model.CellRow) {
				*c = model.CellRow{Product: c.Product, ID: c.ID, Reason: "no step qualified"}
			})
		}},
		{"hydra S2l measured against its entry", "as each entry declares", "hydra S2l: its entry says N/A", false, func(t *testing.T, r *Run) {
			editCell(t, r, "hydra", "S2l", func(c *model.CellRow) { c.Steady, c.QPS = true, 1 })
		}},
		{"keycloak S5 N/A its entry does not declare", "as each entry declares", "keycloak S5: want numbers with zero errors", false, func(t *testing.T, r *Run) {
			editCell(t, r, "keycloak", "S5", func(c *model.CellRow) {
				*c = model.CellRow{Product: c.Product, ID: c.ID, Scenario: c.Scenario, Reason: "no step qualified"}
			})
		}},
		{"refop without S2j", "refop numbers", "refop S2j: no row in the comparison", false, func(t *testing.T, r *Run) {
			r.Cells = slices.DeleteFunc(r.Cells, func(c model.CellRow) bool { return c.Product == "refop" && c.ID == "S2j" })
		}},
		{"refop S1 with no qps", "refop numbers", "refop S1: want numbers", false, func(t *testing.T, r *Run) {
			editCell(t, r, "refop", "S1", func(c *model.CellRow) { c.QPS = 0 })
		}},
		{"hydra S2l measured", "hydra S2l N/A", "hydra S2l: want an N/A cell saying /userinfo .*200 and no sub/", false, func(t *testing.T, r *Run) {
			editCell(t, r, "hydra", "S2l", func(c *model.CellRow) { c.Steady = true })
		}},
		{"refop S2l N/A for another reason", "refop S2l N/A", "refop S2l: want an N/A cell saying /userinfo with 403/", false, func(t *testing.T, r *Run) {
			editCell(t, r, "refop", "S2l", func(c *model.CellRow) { c.Reason = "no step below 1% errors" })
		}},
		{"S1 judged by two checks", "one check per scenario", "steady cells of one scenario judged by different checks", false, func(t *testing.T, r *Run) {
			editCell(t, r, "keycloak", "S1", func(c *model.CellRow) { c.Check = "2xx" })
		}},
		{"a steady cell without its check", "one check per scenario", "judged by different checks", false, func(t *testing.T, r *Run) {
			for _, p := range []string{"refop", "hydra", "keycloak"} {
				editCell(t, r, p, "S5", func(c *model.CellRow) { c.Check = "" })
			}
		}},
		{"a step counting a 401 as ok", "ok within 2xx", "more ok than 2xx answers", false, func(t *testing.T, r *Run) {
			editStep(t, r, firstStep(t, r, "hydra/client_credentials-c*.json"), func(s *schema.Step) {
				s.StatusCodes = map[string]int64{"200": s.OK - 1, "401": 1}
			})
		}},
		{"an iteration counting more ok than its token request", "ok within 2xx", "more ok than 2xx answers", false, func(t *testing.T, r *Run) {
			editStep(t, r, firstStep(t, r, "keycloak/auth_code-c*.json"), func(s *schema.Step) {
				last := s.RequestOrder[len(s.RequestOrder)-1]
				byName := map[string]schema.NamedRequests{}
				for k, v := range s.RequestsByName {
					byName[k] = v
				}
				tok := byName[last]
				tok.OK = s.OK - 1
				byName[last] = tok
				s.RequestsByName = byName
			})
		}},
		{"an iteration step without its request order", "ok within 2xx", "more ok than 2xx answers", false, func(t *testing.T, r *Run) {
			editStep(t, r, firstStep(t, r, "refop/auth_code-c*.json"), func(s *schema.Step) { s.RequestOrder = nil })
		}},
		{"a step without its check", "ok within 2xx", "steps without their check", false, func(t *testing.T, r *Run) {
			editStep(t, r, "refop/gcjitter.json", func(s *schema.Step) { s.Check = "" })
		}},
		{"keycloak's server side disagrees", "server side agrees", "keycloak: no steady cell whose server-side count agrees", false, func(t *testing.T, r *Run) {
			for _, c := range r.Cells {
				if c.Product == "keycloak" && c.Server != nil {
					editCell(t, r, c.Product, c.ID, func(c *model.CellRow) {
						s := *c.Server
						s.Agrees = false
						c.Server = &s
					})
				}
			}
		}},
		{"hydra's start scrape mode 0600", "server side agrees", "not mode 0644", true, func(t *testing.T, r *Run) {
			if err := os.Chmod(agreeingScrape(t, r, "hydra"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"keycloak's start scrape missing", "server side agrees", "keycloak: the raw start scrape", true, func(t *testing.T, r *Run) {
			if err := os.Remove(agreeingScrape(t, r, "keycloak")); err != nil {
				t.Fatal(err)
			}
		}},
		{"refop with a server-side count", "refop server side N/A", "refop: want its steady cells' server side N/A", false, func(t *testing.T, r *Run) {
			editCell(t, r, "refop", "S3", func(c *model.CellRow) { c.Server = &model.ServerRow{Requests: 1000, Agrees: true} })
		}},
		{"no Server side section", "Server side section", "COMPARISON.md has no Server side section", false, func(t *testing.T, r *Run) {
			r.Comparison = strings.ReplaceAll(r.Comparison, "## Server side", "## Server")
		}},
		{"a warmup beyond its cap", "warmup rule", "a warmup outside its floor and cap", false, func(t *testing.T, r *Run) {
			editStep(t, r, firstStep(t, r, "hydra/discovery-c*.json"), func(s *schema.Step) { s.WarmupS = s.WarmupRule.MaxS + 1.5 })
		}},
		{"a warmup below its floor", "warmup rule", "a warmup outside its floor and cap", false, func(t *testing.T, r *Run) {
			editStep(t, r, firstStep(t, r, "keycloak/refresh-c*.json"), func(s *schema.Step) { s.WarmupS = s.WarmupRule.MinS - 0.1 })
		}},
		{"a ladder step without its warmup rule", "warmup rule", "ladder steps without the adaptive warmup's record", false, func(t *testing.T, r *Run) {
			editStep(t, r, firstStep(t, r, "refop/userinfo-c*.json"), func(s *schema.Step) { s.WarmupRule = nil })
		}},
		{"a ladder step without its warmup's stability", "warmup rule", "ladder steps without the adaptive warmup's record", false, func(t *testing.T, r *Run) {
			editStep(t, r, firstStep(t, r, "refop/introspect-c*.json"), func(s *schema.Step) { s.WarmupStable = nil })
		}},
		{"a ladder without its knee record", "knee records", "its ladder has no knee record", false, func(t *testing.T, r *Run) {
			delete(r.Knees, "keycloak/introspect.knee.json")
		}},
		{"no phase records", "phase table", "no phases.jsonl or no 'Where the time goes' table", false, func(t *testing.T, r *Run) {
			r.Phases = 0
		}},
		{"no phase table", "phase table", "no phases.jsonl or no 'Where the time goes' table", false, func(t *testing.T, r *Run) {
			r.Comparison = strings.ReplaceAll(r.Comparison, "## Where the time goes", "## Phases")
		}},
		{"keycloak without the argon2 fact", "facts read", "keycloak: want the password hashing read from its database (argon2)", false, func(t *testing.T, r *Run) {
			editFacts(t, r, "keycloak", func(fs []schema.Fact) []schema.Fact {
				return slices.DeleteFunc(fs, func(f schema.Fact) bool { return f.Name == "password hashing" })
			})
		}},
		{"keycloak's hashing documented, not read", "facts read", "keycloak: want the password hashing", false, func(t *testing.T, r *Run) {
			editFact(t, r, "keycloak", "password hashing", func(f *schema.Fact) { f.Source = schema.FactDocumented })
		}},
		{"hydra hashing with bcrypt", "facts read", "hydra: want the client secret hashing read from its database", false, func(t *testing.T, r *Run) {
			editFact(t, r, "hydra", "client secret hashing", func(f *schema.Fact) { f.Value = "bcrypt, cost 10" })
		}},
		{"hydra without #3863", "facts read", "the known discovery bottleneck (#3863)", false, func(t *testing.T, r *Run) {
			editMeta(t, r, "hydra", func(m *schema.Meta) { m.Known = nil })
		}},
		{"refop's version recalled, not read", "versions and listeners", "refop: no version read from the running product", false, func(t *testing.T, r *Run) {
			editFact(t, r, "refop", "version", func(f *schema.Fact) { f.Source = schema.FactDocumented })
		}},
		{"hydra with two listeners facts", "versions and listeners", "hydra: want one listeners fact read from /proc", false, func(t *testing.T, r *Run) {
			editFacts(t, r, "hydra", func(fs []schema.Fact) []schema.Fact {
				i := slices.IndexFunc(fs, func(f schema.Fact) bool { return f.Name == "listeners" })
				return append(fs, fs[i])
			})
		}},
		{"keycloak's listeners not from /proc", "versions and listeners", "keycloak: want one listeners fact read from /proc", false, func(t *testing.T, r *Run) {
			editFact(t, r, "keycloak", "listeners", func(f *schema.Fact) { f.From = "ss -ltn" })
		}},
		{"keycloak listening on every interface", "versions and listeners", "keycloak: want listeners on loopback only", false, func(t *testing.T, r *Run) {
			editFact(t, r, "keycloak", "listeners", func(f *schema.Fact) { f.Value += " 0.0.0.0:9000" })
		}},
		{"refop listening on no socket", "versions and listeners", `refop: want listeners on loopback only, got ""`, false, func(t *testing.T, r *Run) {
			editFact(t, r, "refop", "listeners", func(f *schema.Fact) { f.Value = "" })
		}},
		{"no known limit", "known limit", "COMPARISON.md does not mark the row a known limit shapes", false, func(t *testing.T, r *Run) {
			r.Comparison = strings.ReplaceAll(r.Comparison, "known limit", "limit")
		}},
		{"hydra S4 without its requests' latencies", "per-request-name latencies", "hydra S4: no per-request-name latencies", false, func(t *testing.T, r *Run) {
			editCell(t, r, "hydra", "S4", func(c *model.CellRow) { c.ByName = nil })
		}},
		{"keycloak's cold start B interrupted", "cold start, GC jitter, samples", "keycloak: coldstart-B.json missing or not complete", false, func(t *testing.T, r *Run) {
			c := *r.Coldstarts["keycloak/coldstart-B.json"]
			c.Status = "interrupted"
			r.Coldstarts["keycloak/coldstart-B.json"] = &c
		}},
		{"refop without its GC-jitter run", "cold start, GC jitter, samples", "refop: gcjitter.json missing or not complete", false, func(t *testing.T, r *Run) {
			delete(r.Steps, "refop/gcjitter.json")
		}},
		{"hydra without sampler records", "cold start, GC jitter, samples", "hydra: no sampler records", false, func(t *testing.T, r *Run) {
			for rel := range r.Samples {
				if strings.HasPrefix(rel, "hydra/") {
					delete(r.Samples, rel)
				}
			}
		}},
		{"no Hydra S1 row", "hydra S1 row", "COMPARISON.md has no Hydra S1 row", false, func(t *testing.T, r *Run) {
			r.Comparison = strings.ReplaceAll(r.Comparison, "| S1 discovery | hydra |", "| S1 discovery | ory |")
		}},
		{"zitadel's N/A row without its reason", "zitadel", "COMPARISON.md has no N/A row for Zitadel with the reason", false, func(t *testing.T, r *Run) {
			r.Comparison = regexp.MustCompile(`(?m)^(\| S1 discovery \| zitadel \| N/A .*)ZITADEL_BIN`).ReplaceAllString(r.Comparison, "${1}the binary")
		}},
		{"zitadel N/A for another reason", "zitadel", "zitadel: want an N/A meta naming ZITADEL_BIN and Docker", false, func(t *testing.T, r *Run) {
			editMeta(t, r, "zitadel", func(m *schema.Meta) { m.NAReason = "install failed" })
		}},
		{"no charts", "charts", "no SVG charts next to COMPARISON.md", true, func(t *testing.T, r *Run) {
			if err := os.RemoveAll(filepath.Join(r.Dir, "charts")); err != nil {
				t.Fatal(err)
			}
		}},
	}
}

// TestZitadelRows: the three ways Zitadel's rows may look, each on a run
// that has them and on one that has not. Measured rows are made of the
// reference OP's (its S2l is N/A as its meta declares).
func TestZitadelRows(t *testing.T) {
	native := func(t *testing.T, r *Run) {
		editMeta(t, r, "zitadel", func(m *schema.Meta) {
			m.NAReason = "zitadel listens beyond loopback: [::]:8080 (pid 4242 zitadel)"
		})
	}
	tests := []struct {
		name   string
		z      Zitadel
		doctor func(t *testing.T, r *Run)
		want   string // in the error; "" = holds
	}{
		{"unavailable", ZitadelUnavailable, nil, ""},
		{"native", ZitadelNative, native, ""},
		{"native, N/A for the binary", ZitadelNative, nil, "zitadel native: want an N/A meta naming the socket it listens on beyond loopback"},
		{"unavailable, refused natively", ZitadelUnavailable, native, "zitadel: want an N/A meta naming ZITADEL_BIN and Docker"},
		{"measured", ZitadelMeasured, asZitadel, ""},
		{"measured, meta N/A", ZitadelMeasured, nil, "zitadel: ZITADEL_BIN is set or a Docker engine answers, but its meta is"},
		{"measured, S3 with a failed request", ZitadelMeasured, func(t *testing.T, r *Run) {
			asZitadel(t, r)
			editCell(t, r, "zitadel", "S3", func(c *model.CellRow) { c.Failed = 2 })
		}, "zitadel S3: want numbers with zero errors"},
		{"measured, S2l N/A for another reason", ZitadelMeasured, func(t *testing.T, r *Run) {
			asZitadel(t, r)
			editCell(t, r, "zitadel", "S2l", func(c *model.CellRow) { c.Reason = "no step below 1% errors" })
		}, "zitadel S2l: the meta declares it N/A"},
		{"measured, S2l N/A undeclared", ZitadelMeasured, func(t *testing.T, r *Run) {
			asZitadel(t, r)
			editMeta(t, r, "zitadel", func(m *schema.Meta) { m.ScenarioNA = nil })
		}, "zitadel S2l: want numbers with zero errors"},
		{"measured, S4 without its requests' latencies", ZitadelMeasured, func(t *testing.T, r *Run) {
			asZitadel(t, r)
			editCell(t, r, "zitadel", "S4", func(c *model.CellRow) { c.ByName = nil })
		}, "zitadel S4: no per-request-name latencies"},
		{"measured, no cold start A", ZitadelMeasured, func(t *testing.T, r *Run) {
			asZitadel(t, r)
			delete(r.Coldstarts, "zitadel/coldstart-A.json")
		}, "zitadel: coldstart-A.json missing or not complete"},
		{"measured, no sampler records", ZitadelMeasured, func(t *testing.T, r *Run) {
			asZitadel(t, r)
			for rel := range r.Samples {
				if strings.HasPrefix(rel, "zitadel/") {
					delete(r.Samples, rel)
				}
			}
		}, "zitadel: no sampler records"},
	}
	for _, f := range fixtures() {
		if f.zitadel != ZitadelUnavailable {
			continue // the cases start from Zitadel's rows N/A without ZITADEL_BIN and Docker
		}
		base := loaded(t, f.dir)
		for _, tt := range tests {
			t.Run(f.name+"/"+tt.name, func(t *testing.T) {
				r := base.Clone()
				if tt.doctor != nil {
					tt.doctor(t, r)
				}
				ok, err := checkNamed(t, tt.z, "zitadel").Run(r)
				switch {
				case tt.want == "" && err != nil:
					t.Fatal(err)
				case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
					t.Fatalf("got %v, want an error saying %q", err, tt.want)
				}
				t.Log(ok, err)
			})
		}
	}
}

// asZitadel gives r a measured Zitadel made of the reference OP's cells,
// meta and records.
func asZitadel(t *testing.T, r *Run) {
	t.Helper()
	r.Cells = slices.DeleteFunc(r.Cells, func(c model.CellRow) bool { return c.Product == "zitadel" })
	for _, c := range slices.Clone(r.Cells) {
		if c.Product == "refop" {
			c.Product = "zitadel"
			r.Cells = append(r.Cells, c)
		}
	}
	m := *r.Metas["refop/meta.json"]
	m.Product = "zitadel"
	r.Metas["zitadel/meta.json"] = &m
	for rel, c := range r.Coldstarts {
		if rest, ok := strings.CutPrefix(rel, "refop/"); ok {
			r.Coldstarts["zitadel/"+rest] = c
		}
	}
	for rel, s := range r.Steps {
		if rest, ok := strings.CutPrefix(rel, "refop/"); ok {
			r.Steps["zitadel/"+rest] = s
		}
	}
	for rel, n := range r.Samples {
		if rest, ok := strings.CutPrefix(rel, "refop/"); ok {
			r.Samples["zitadel/"+rest] = n
		}
	}
}

// editCell changes product's cell id in r.Cells (a copy: its ByName and
// Server are shared, so f replaces them rather than writing through them).
func editCell(t *testing.T, r *Run, product, id string, f func(c *model.CellRow)) {
	t.Helper()
	i := slices.IndexFunc(r.Cells, func(c model.CellRow) bool { return c.Product == product && c.ID == id })
	if i < 0 {
		t.Fatalf("no cell %s %s", product, id)
	}
	f(&r.Cells[i])
}

// editStep replaces the step at rel with a changed copy (f replaces its
// maps and slices rather than writing to them).
func editStep(t *testing.T, r *Run, rel string, f func(s *schema.Step)) {
	t.Helper()
	s := r.Steps[rel]
	if s == nil {
		t.Fatalf("no step %s", rel)
	}
	c := *s
	f(&c)
	r.Steps[rel] = &c
}

// firstStep is the first step whose path relative to the run matches pattern.
func firstStep(t *testing.T, r *Run, pattern string) string {
	t.Helper()
	for _, rel := range sortedKeys(r.Steps) {
		if m, _ := filepath.Match(pattern, rel); m {
			return rel
		}
	}
	t.Fatalf("no step %s in %s", pattern, r.Dir)
	return ""
}

// editMeta replaces product's meta with a changed copy.
func editMeta(t *testing.T, r *Run, product string, f func(m *schema.Meta)) {
	t.Helper()
	m, err := r.meta(product)
	if err != nil {
		t.Fatal(err)
	}
	c := *m
	f(&c)
	r.Metas[product+"/meta.json"] = &c
}

// editFacts replaces product's facts with f's result on a copy of them.
func editFacts(t *testing.T, r *Run, product string, f func([]schema.Fact) []schema.Fact) {
	t.Helper()
	editMeta(t, r, product, func(m *schema.Meta) { m.Facts = f(slices.Clone(m.Facts)) })
}

// editFact changes product's fact called name.
func editFact(t *testing.T, r *Run, product, name string, f func(*schema.Fact)) {
	t.Helper()
	editFacts(t, r, product, func(fs []schema.Fact) []schema.Fact {
		i := slices.IndexFunc(fs, func(f schema.Fact) bool { return f.Name == name })
		if i < 0 {
			t.Fatalf("%s: no fact %q", product, name)
		}
		f(&fs[i])
		return fs
	})
}

// agreeingScrape is the start scrape the server-side check looks at for
// product: that of its first steady cell whose count agrees.
func agreeingScrape(t *testing.T, r *Run, product string) string {
	t.Helper()
	for _, c := range r.Cells {
		if c.Product == product && c.Steady && c.Server != nil && c.Server.Agrees {
			return filepath.Join(r.Dir, filepath.Dir(c.File), c.Server.StartScrape)
		}
	}
	t.Fatalf("%s: no steady cell whose server-side count agrees", product)
	return ""
}

// TestSharesMeasured: on the reference run given windows at shares at the
// rate the rule sets, the check holds; a wrong rate, a missing share, a
// product with no figures at any share and percentiles out of order each
// fail it.
func TestSharesMeasured(t *testing.T) {
	base := loaded(t, filepath.Join("..", "..", "results", "reference"))
	withShares := func(r *Run) {
		for i, c := range r.Cells {
			if !c.Steady || c.Capacity == nil {
				continue
			}
			capQPS := c.Capacity.Raw.Median
			c.Shares = nil
			for _, sh := range []int{50, 80} {
				c.Shares = append(c.Shares, model.ShareRow{Share: sh, RateRPS: math.Round(capQPS*float64(sh)) / 100, QPS: capQPS * float64(sh) / 100,
					Windows: 1, Seconds: 10, P50: model.IntervalRow{Median: 1}, P95: model.IntervalRow{Median: 2}, P99: model.IntervalRow{Median: 3}})
			}
			r.Cells[i] = c
		}
	}
	check := sharesMeasured("refop", "hydra", "keycloak")
	r := base.Clone()
	withShares(r)
	if ok, err := check(r); err != nil {
		t.Fatalf("with every share: %v", err)
	} else {
		t.Log(ok)
	}
	for _, c := range []struct {
		name, want string
		doctor     func(r *Run)
	}{
		{"a wrong rate", "hydra S1 at 80%: rate", func(r *Run) {
			editCell(t, r, "hydra", "S1", func(c *model.CellRow) { c.Shares[1].RateRPS *= 1.01 })
		}},
		{"a missing share", "keycloak S3: no windows at 80% of its capacity", func(r *Run) {
			editCell(t, r, "keycloak", "S3", func(c *model.CellRow) { c.Shares = c.Shares[:1] })
		}},
		{"percentiles out of order", "refop S2 at 50%: P50 1, P95 2, P99 1.5 ms", func(r *Run) {
			editCell(t, r, "refop", "S2", func(c *model.CellRow) { c.Shares[0].P99.Median = 1.5 })
		}},
		{"no figures at any share", "refop: no latency at any share of capacity", func(r *Run) {
			for _, c := range r.Cells {
				if c.Product == "refop" && len(c.Shares) > 0 {
					editCell(t, r, "refop", c.ID, func(c *model.CellRow) {
						for i := range c.Shares {
							c.Shares[i].NA = "errors 1% in a window"
						}
					})
				}
			}
		}},
	} {
		r := base.Clone()
		withShares(r)
		c.doctor(r)
		if _, err := check(r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
