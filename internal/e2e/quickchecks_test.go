package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/sustaincheck"
	"github.com/idpbench/idpbench/products"
)

// A Check is one assertion on a quick comparison's run. It returns what it
// saw when it holds, and an error saying what it wanted and got when not.
type Check struct {
	Name string
	Run  func(r *Run) (string, error)
}

// Zitadel is what a run's Zitadel rows must show: Zitadel runs only where
// the user brings its binary (ZITADEL_BIN) or a Docker engine.
type Zitadel int

const (
	// ZitadelUnavailable: neither ZITADEL_BIN nor a Docker engine; its rows are N/A saying so.
	ZitadelUnavailable Zitadel = iota
	// ZitadelNative: ZITADEL_BIN (not IDPBENCH_MODE=compose). Zitadel listens
	// on every interface and cannot be told otherwise: refused, its rows N/A
	// naming the socket.
	ZitadelNative
	// ZitadelMeasured: compose mode; its rows are asserted like the others'.
	ZitadelMeasured
)

// QuickChecks are the assertions on the quick comparison of refop, hydra,
// keycloak and zitadel, in the order scripts/test.sh makes them.
func QuickChecks(z Zitadel) []Check {
	return []Check{
		{"COMPARISON.md", comparisonWritten},
		{"hydra numbers", expect("hydra", "S1", "S2", "S3", "S4", "S5", "S6")},
		{"keycloak numbers", expect("keycloak", "S1", "S2", "S2l", "S3", "S4", "S5", "S6")},
		{"refop numbers", expect("refop", "S1", "S2", "S2j", "S3", "S4", "S5", "S6")},
		// S2l's userinfo must answer 2xx with a sub: products that answer a client's token otherwise are N/A.
		{"hydra S2l N/A", expectNA("hydra", "S2l", `userinfo .*200 and no sub`)},
		{"refop S2l N/A", expectNA("refop", "S2l", `userinfo with 403`)},
		{"as each entry declares", asDeclared},
		{"one check per scenario", oneCheckPerScenario},
		{"ok within 2xx", okWithin2xx},
		{"server side agrees", withMetrics(serverSideAgrees)},
		{"refop server side N/A", refopServerNA},
		{"Server side section", matches(`(?m)^## Server side`, "COMPARISON.md has no Server side section")},
		{"warmup rule", warmupRule},
		{"knee records", kneeRecords},
		{"latency at shares", forMeasured(sharesMeasured)},
		{"sustained", sustainedRespected},
		{"interleaved round", forMeasured(interleaved)},
		{"phase table", phaseTable},
		{"facts read", factsRead},
		{"versions and listeners", forMeasured(versionsAndListeners)},
		{"known limit", contains("known limit", "COMPARISON.md does not mark the row a known limit shapes")},
		{"per-request-name latencies", forMeasured(byName)},
		{"cold start, GC jitter, samples", forMeasured(records)},
		{"hydra S1 row", matches(`(?m)^\| S1 discovery \| hydra \|`, "COMPARISON.md has no Hydra S1 row")},
		{"zitadel", zitadelRows(z)},
		{"charts", charts},
	}
}

func comparisonWritten(r *Run) (string, error) {
	if r.Comparison == "" {
		return "", fmt.Errorf("no COMPARISON.md in %s", r.Dir)
	}
	return fmt.Sprintf("COMPARISON.md, %d bytes", len(r.Comparison)), nil
}

// measured are the products of the run with a steady cell, sorted: the
// ones each per-product check below holds to (refop, hydra and keycloak in
// the reference; a product added to the quick comparison joins them).
func measured(r *Run) []string {
	var ps []string
	for _, c := range r.Cells {
		if c.Steady && !slices.Contains(ps, c.Product) {
			ps = append(ps, c.Product)
		}
	}
	slices.Sort(ps)
	return ps
}

// forMeasured is the check per-product makes for the run's measured products.
func forMeasured(perProduct func(products ...string) func(*Run) (string, error)) func(*Run) (string, error) {
	return func(r *Run) (string, error) { return perProduct(measured(r)...)(r) }
}

// withMetrics is the check per-product makes for the run's measured
// products whose entry has server-side series (hydra and keycloak in the
// reference).
func withMetrics(perProduct func(products ...string) func(*Run) (string, error)) func(*Run) (string, error) {
	return func(r *Run) (string, error) {
		var ps []string
		for _, p := range measured(r) {
			if m, ok := products.ServerMetrics(p); ok && m.NA == "" {
				ps = append(ps, p)
			}
		}
		return perProduct(ps...)(r)
	}
}

// asDeclared: every cell of a measured product is as its registry entry
// declares: N/A with the entry's reason where the entry has one, numbers
// with zero errors at the steady step everywhere else. A product added to
// the registry and to the quick comparison is held to its own entry here.
func asDeclared(r *Run) (string, error) {
	var seen []string
	for _, p := range measured(r) {
		entry, ok := products.Lookup(p)
		if !ok {
			return "", fmt.Errorf("%s: measured in the run, not in the registry", p)
		}
		n, na := 0, 0
		for _, c := range r.Cells {
			if c.Product != p {
				continue
			}
			n++
			if reason := entry.NA[c.Scenario]; reason != "" {
				if c.Steady || !strings.Contains(c.Reason, reason) {
					return "", fmt.Errorf("%s %s: its entry says N/A (%s), the row says %s", p, c.ID, reason, jsonOf(c))
				}
				na++
				continue
			}
			if !c.Steady || c.QPS <= 0 || c.Failed != 0 {
				return "", fmt.Errorf("%s %s: want numbers with zero errors at the steady step, got %s", p, c.ID, jsonOf(c))
			}
		}
		seen = append(seen, fmt.Sprintf("%s: %d cells, %d N/A as its entry says", p, n, na))
	}
	return strings.Join(seen, "; "), nil
}

// expect: each of product's cells ids has a steady step with zero failed requests.
func expect(product string, ids ...string) func(*Run) (string, error) {
	return func(r *Run) (string, error) {
		var seen []string
		for _, id := range ids {
			rows := r.cells(product, id)
			if len(rows) == 0 {
				return "", fmt.Errorf("%s %s: no row in the comparison", product, id)
			}
			c := rows[0]
			if !c.Steady || c.QPS <= 0 || c.Failed != 0 {
				return "", fmt.Errorf("%s %s: want numbers with zero errors at the steady step, got %s", product, id, jsonOf(c))
			}
			seen = append(seen, fmt.Sprintf("%s %s c=%d qps=%.0f p99=%gms failed=%d",
				product, id, c.Connections, math.Floor(c.QPS), c.P99MS, c.Failed))
		}
		return strings.Join(seen, "; "), nil
	}
}

// expectNA: product's cell id is N/A, once, with a reason matching re.
func expectNA(product, id, re string) func(*Run) (string, error) {
	return func(r *Run) (string, error) {
		rows := r.cells(product, id)
		if len(rows) != 1 || rows[0].Steady || !regexp.MustCompile(re).MatchString(rows[0].Reason) {
			return "", fmt.Errorf("%s %s: want an N/A cell saying /%s/, got %s", product, id, re, jsonOf(rows))
		}
		return fmt.Sprintf("%s %s N/A: %s", product, id, rows[0].Reason), nil
	}
}

// oneCheckPerScenario: every steady cell of a scenario was judged by the
// same success rule, and it has one.
func oneCheckPerScenario(r *Run) (string, error) {
	checks := map[string][]string{} // scenario id -> the distinct checks of its steady cells
	for _, c := range r.Cells {
		if c.Steady && !slices.Contains(checks[c.ID], c.Check) {
			checks[c.ID] = append(checks[c.ID], c.Check)
		}
	}
	for _, cs := range checks {
		if len(cs) != 1 || cs[0] == "" {
			type cell struct{ Product, ID, Check string }
			var steady []cell
			for _, c := range r.Cells {
				if c.Steady {
					steady = append(steady, cell{c.Product, c.ID, c.Check})
				}
			}
			return "", fmt.Errorf("steady cells of one scenario judged by different checks: %s", jsonOf(steady))
		}
	}
	return fmt.Sprintf("%d scenarios, one check each", len(checks)), nil
}

// okWithin2xx: every step of the products' directories records its check,
// and none counts more ok than 2xx answers, so none counts a 4xx or 5xx as
// ok (an iteration step: not more than its last request's ok).
func okWithin2xx(r *Run) (string, error) {
	var bad []string
	n := 0
	for _, rel := range sortedKeys(r.Steps) {
		if m, _ := filepath.Match("*/*.json", rel); !m {
			continue
		}
		n++
		s := r.Steps[rel]
		if s.Check == "" || s.OK > okBound(s) {
			bad = append(bad, fmt.Sprintf("%s: %s", filepath.Join(r.Dir, rel), jsonOf(map[string]any{
				"check": s.Check, "ok": s.OK, "status_codes": s.StatusCodes})))
		}
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("steps without their check, or with more ok than 2xx answers: %s", strings.Join(bad, "; "))
	}
	return fmt.Sprintf("all %d steps record their check; none counts more ok than 2xx answers", n), nil
}

// okBound is the most ok a step can count: its 2xx answers, or for an
// iteration step its last request's ok (-1 when the step names none).
func okBound(s *schema.Step) int64 {
	if s.CountUnit == schema.CountIterations {
		if len(s.RequestOrder) == 0 {
			return -1
		}
		last, ok := s.RequestsByName[s.RequestOrder[len(s.RequestOrder)-1]]
		if !ok {
			return -1
		}
		return last.OK
	}
	var n int64
	for code, c := range s.StatusCodes {
		if strings.HasPrefix(code, "2") {
			n += c
		}
	}
	return n
}

// serverSideAgrees (issue 16): each product's own count of a steady window
// agrees with loadstep's (within 1% plus what the window's edges explain) on
// at least one scenario, and the raw start scrape of the first such window
// lies beside its step, mode 0644. (A malformed or unreachable metrics
// endpoint: the tests of cmd/loadstep and internal/report.)
func serverSideAgrees(products ...string) func(*Run) (string, error) {
	return func(r *Run) (string, error) {
		var seen []string
		for _, p := range products {
			var agree []model.CellRow
			for _, c := range r.Cells {
				if c.Product == p && c.Steady && c.Server != nil && c.Server.Agrees {
					agree = append(agree, c)
				}
			}
			if len(agree) == 0 {
				type side struct {
					ID     string           `json:"id"`
					Server *model.ServerRow `json:"server"`
				}
				var sides []side
				for _, c := range r.Cells {
					if c.Product == p {
						sides = append(sides, side{c.ID, c.Server})
					}
				}
				return "", fmt.Errorf("%s: no steady cell whose server-side count agrees with loadstep's: %s", p, jsonOf(sides))
			}
			for _, c := range agree {
				seen = append(seen, fmt.Sprintf("%s %s c=%d: server %d, loadstep %d (slack %d)",
					p, c.ID, c.Connections, c.Server.Requests, c.Server.LoadstepRequests, c.Server.Slack))
			}
			scrape := filepath.Join(r.Dir, filepath.Dir(agree[0].File), agree[0].Server.StartScrape)
			fi, err := os.Stat(scrape)
			if agree[0].Server.StartScrape == "" || err != nil || fi.Mode()&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0o644 {
				return "", fmt.Errorf("%s: the raw start scrape %s is missing or not mode 0644", p, scrape)
			}
		}
		return strings.Join(seen, "; "), nil
	}
}

// refopServerNA: the reference OP has no metrics endpoint, so the server
// side of its steady cells (but its iterations') says so.
func refopServerNA(r *Run) (string, error) {
	noMetrics := regexp.MustCompile(`no metrics endpoint`)
	n, bad := 0, false
	for _, c := range r.Cells {
		if c.Product != "refop" || !c.Steady || c.Unit == schema.CountIterations {
			continue
		}
		n++
		bad = bad || c.Server == nil || !noMetrics.MatchString(c.Server.NA)
	}
	if n == 0 || bad {
		type side struct {
			ID     string           `json:"id"`
			Server *model.ServerRow `json:"server"`
		}
		var sides []side
		for _, c := range r.Cells {
			if c.Product == "refop" {
				sides = append(sides, side{c.ID, c.Server})
			}
		}
		return "", fmt.Errorf("refop: want its steady cells' server side N/A (no metrics endpoint), got %s", jsonOf(sides))
	}
	return fmt.Sprintf("refop: %d steady cells' server side N/A (no metrics endpoint)", n), nil
}

// ladderFiles are the ladder steps' files, PRODUCT/SCENARIO-cC*.json,
// relative to the run directory.
func ladderFiles(r *Run) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(r.Dir, "*", "*-c*.json"))
	if err != nil {
		return nil, err
	}
	for i, f := range files {
		files[i], _ = filepath.Rel(r.Dir, f)
	}
	return files, nil
}

// warmupRule: every ladder step records the adaptive warmup (its rule and
// whether it became stable), and warmed at least the rule's floor and at
// most its cap (plus a second: the warmup ends on an interval).
func warmupRule(r *Run) (string, error) {
	files, err := ladderFiles(r)
	if err != nil {
		return "", err
	}
	var bad []string
	n := 0
	for _, rel := range files {
		s := r.Steps[rel]
		if s == nil || s.Labels["phase"] != "ladder" {
			continue
		}
		n++
		w := s.WarmupRule
		if w == nil || s.WarmupStable == nil || s.WarmupS < w.MinS || s.WarmupS > w.MaxS+1 {
			bad = append(bad, fmt.Sprintf("%s: %s", rel, jsonOf(map[string]any{
				"warmup_s": s.WarmupS, "warmup_rule": w, "warmup_stable": s.WarmupStable})))
		}
	}
	if n == 0 || len(bad) > 0 {
		return "", fmt.Errorf("ladder steps without the adaptive warmup's record, or a warmup outside its floor and cap (%d ladder steps): %s",
			n, strings.Join(bad, "; "))
	}
	return fmt.Sprintf("all %d ladder steps warmed by the rule within its floor and cap", n), nil
}

// kneeRecords: every ladder has its knee record (where round 1 stopped),
// SCENARIO.knee.json beside its steps.
func kneeRecords(r *Run) (string, error) {
	files, err := ladderFiles(r)
	if err != nil {
		return "", err
	}
	ladders := map[string]bool{}
	for _, rel := range files {
		base := filepath.Base(rel)
		knee := filepath.Join(filepath.Dir(rel), base[:strings.Index(base, "-c")]+".knee.json")
		if r.Knees[knee] == nil {
			return "", fmt.Errorf("%s: its ladder has no knee record (%s)", filepath.Join(r.Dir, rel), filepath.Join(r.Dir, knee))
		}
		ladders[knee] = true
	}
	return fmt.Sprintf("%d ladders, each with its knee record", len(ladders)), nil
}

// phaseTable: the phase records (phases.jsonl) and the report's table of them.
func phaseTable(r *Run) (string, error) {
	if r.Phases == 0 || !regexp.MustCompile(`(?m)^## Where the time goes`).MatchString(r.Comparison) {
		return "", fmt.Errorf("no phases.jsonl or no 'Where the time goes' table in %s", r.Dir)
	}
	return fmt.Sprintf("%d phase records, and their table", r.Phases), nil
}

// factsRead: the facts are read from the running products, not recalled:
// Keycloak's password hashing (Argon2id) from its database, Hydra's client
// secret hashing (PBKDF2) from its, and Hydra's known discovery bottleneck.
func factsRead(r *Run) (string, error) {
	kc, err := r.meta("keycloak")
	if err != nil {
		return "", err
	}
	argon := findFact(kc, func(f schema.Fact) bool {
		return f.Name == "password hashing" && f.Source == schema.FactRead && strings.HasPrefix(f.Value, "argon2")
	})
	if argon == nil {
		return "", fmt.Errorf("keycloak: want the password hashing read from its database (argon2), got %s", jsonOf(kc.Facts))
	}
	hy, err := r.meta("hydra")
	if err != nil {
		return "", err
	}
	pbkdf2 := findFact(hy, func(f schema.Fact) bool {
		return f.Name == "client secret hashing" && f.Source == schema.FactRead && strings.HasPrefix(f.Value, "pbkdf2-sha256")
	})
	known := slices.ContainsFunc(hy.Known, func(k schema.Known) bool { return strings.HasSuffix(k.Ref, "/issues/3863") })
	if pbkdf2 == nil || !known {
		return "", errors.New("hydra: want the client secret hashing read from its database and the known discovery bottleneck (#3863)")
	}
	return fmt.Sprintf("keycloak password hashing %q; hydra client secret hashing %q, known #3863", argon.Value, pbkdf2.Value), nil
}

// versionsAndListeners: each product's meta has its version read from the
// running product, and one listeners fact read from /proc (its process
// tree's listening sockets after its last start), all on loopback.
func versionsAndListeners(products ...string) func(*Run) (string, error) {
	return func(r *Run) (string, error) {
		var seen []string
		for _, p := range products {
			m, err := r.meta(p)
			if err != nil {
				return "", err
			}
			if findFact(m, func(f schema.Fact) bool { return f.Name == "version" && f.Source == schema.FactRead }) == nil {
				return "", fmt.Errorf("%s: no version read from the running product", p)
			}
			var listeners []string // every listeners fact's value
			read := 0              // those read from /proc
			for _, f := range m.Facts {
				if f.Name != "listeners" {
					continue
				}
				listeners = append(listeners, f.Value)
				if f.Source == schema.FactRead && strings.HasPrefix(f.From, "/proc/net/tcp") {
					read++
				}
			}
			if read != 1 {
				return "", fmt.Errorf("%s: want one listeners fact read from /proc in its meta, got %s", p, jsonOf(m.Facts))
			}
			if err := LoopbackOnly(p, strings.Join(listeners, "\n")); err != nil {
				return "", err
			}
			seen = append(seen, fmt.Sprintf("%s listens on loopback only: %s", p, listeners[0]))
		}
		return strings.Join(seen, "; "), nil
	}
}

func findFact(m *schema.Meta, match func(schema.Fact) bool) *schema.Fact {
	if i := slices.IndexFunc(m.Facts, match); i >= 0 {
		return &m.Facts[i]
	}
	return nil
}

// contains: COMPARISON.md holds s; else the error msg.
func contains(s, msg string) func(*Run) (string, error) {
	return func(r *Run) (string, error) {
		if !strings.Contains(r.Comparison, s) {
			return "", errors.New(msg)
		}
		return fmt.Sprintf("COMPARISON.md says %q", s), nil
	}
}

// matches: COMPARISON.md matches the regular expression re; else the error msg.
func matches(re, msg string) func(*Run) (string, error) {
	return func(r *Run) (string, error) {
		m := regexp.MustCompile(re).FindString(r.Comparison)
		if m == "" {
			return "", errors.New(msg)
		}
		return fmt.Sprintf("COMPARISON.md has %q", m), nil
	}
}

// byName: the iteration scenario S4 of each product carries the latencies
// of its named requests (at least 3: the login's hops and the token).
func byName(products ...string) func(*Run) (string, error) {
	return func(r *Run) (string, error) {
		var seen []string
		for _, p := range products {
			rows := r.cells(p, "S4")
			if len(rows) == 0 || len(rows[0].ByName) < 3 {
				return "", fmt.Errorf("%s S4: no per-request-name latencies at the steady step", p)
			}
			seen = append(seen, fmt.Sprintf("%s S4: %s", p, strings.Join(sortedKeys(rows[0].ByName), " ")))
		}
		return strings.Join(seen, "; "), nil
	}
}

// records: each product's cold starts (A and B) and GC-jitter run are
// complete, and the sampler recorded it.
func records(products ...string) func(*Run) (string, error) {
	return func(r *Run) (string, error) {
		for _, p := range products {
			for _, f := range []string{"coldstart-A.json", "coldstart-B.json", "gcjitter.json"} {
				if r.status(p+"/"+f) != schema.StatusComplete {
					return "", fmt.Errorf("%s: %s missing or not complete", p, f)
				}
			}
			if !slices.ContainsFunc(sortedKeys(r.Samples), func(rel string) bool {
				m, _ := filepath.Match(p+"/samples*.jsonl", rel)
				return m
			}) {
				return "", fmt.Errorf("%s: no sampler records", p)
			}
		}
		return fmt.Sprintf("%s: cold starts A and B, GC jitter complete; sampler records", strings.Join(products, ", ")), nil
	}
}

// zitadelRows: Zitadel's rows as z says. Without ZITADEL_BIN and a Docker
// engine they are N/A saying so; in native mode N/A naming the socket it
// listens on beyond loopback; in compose mode asserted like the others',
// where S2l alone may be N/A, and then only as the meta declares it
// (scenario_na), with that reason in the row.
func zitadelRows(z Zitadel) func(*Run) (string, error) {
	return func(r *Run) (string, error) {
		m, err := r.meta("zitadel")
		if err != nil {
			return "", err
		}
		na := func(re string) bool { return m.Status == "na" && regexp.MustCompile(re).MatchString(m.NAReason) }
		switch z {
		case ZitadelUnavailable:
			if !na(`ZITADEL_BIN is not set and no Docker engine`) {
				return "", errors.New("zitadel: want an N/A meta naming ZITADEL_BIN and Docker")
			}
			if !regexp.MustCompile(`(?m)^\| S1 discovery \| zitadel \| N/A .*ZITADEL_BIN`).MatchString(r.Comparison) {
				return "", errors.New("COMPARISON.md has no N/A row for Zitadel with the reason")
			}
			return "zitadel N/A: " + m.NAReason, nil
		case ZitadelNative:
			if !na(`zitadel listens beyond loopback`) {
				return "", fmt.Errorf("zitadel native: want an N/A meta naming the socket it listens on beyond loopback, got %s", metaStatus(m))
			}
			return "zitadel native N/A: " + m.NAReason, nil
		}
		return zitadelMeasured(r, m)
	}
}

func zitadelMeasured(r *Run, m *schema.Meta) (string, error) {
	if m.Status != "ok" {
		return "", fmt.Errorf("zitadel: ZITADEL_BIN is set or a Docker engine answers, but its meta is %s", metaStatus(m))
	}
	ids := []string{"S1", "S2", "S2j", "S3", "S4", "S5", "S6"}
	var seen []string
	if why := m.ScenarioNA["client_credentials_login"]; why == "" {
		ids = append(ids, "S2l")
	} else {
		rows := r.cells("zitadel", "S2l")
		if len(rows) != 1 || rows[0].Steady || rows[0].Reason != why {
			return "", fmt.Errorf("zitadel S2l: the meta declares it N/A (%s), want an N/A row with that reason", why)
		}
		seen = append(seen, "zitadel S2l N/A: "+why)
	}
	for _, c := range []func(*Run) (string, error){expect("zitadel", ids...), byName("zitadel"), records("zitadel")} {
		ok, err := c(r)
		if err != nil {
			return "", err
		}
		seen = append(seen, ok)
	}
	return strings.Join(seen, "; "), nil
}

func metaStatus(m *schema.Meta) string {
	return jsonOf(map[string]string{"status": m.Status, "na_reason": m.NAReason})
}

func charts(r *Run) (string, error) {
	svgs, err := filepath.Glob(filepath.Join(r.Dir, "charts", "*.svg"))
	if err != nil || len(svgs) == 0 {
		return "", errors.New("no SVG charts next to COMPARISON.md")
	}
	return fmt.Sprintf("%d SVG charts", len(svgs)), nil
}

// jsonOf renders v for a message.
func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// interleaved: the quick profile's interleaved round (round 2) measured
// every steady cell of the products once more, at its level, the products
// of a scenario side by side (their round-2 windows within a minute of each
// other); an A/A twin's window was measured in every scenario refop has;
// and the first screen of COMPARISON.md is the verdict table.
func interleaved(products ...string) func(*Run) (string, error) {
	return func(r *Run) (string, error) {
		var bad []string
		starts := map[string][]time.Time{} // by scenario
		n := 0
		for _, c := range r.Cells {
			if !c.Steady || !slices.Contains(products, c.Product) {
				continue
			}
			var found *schema.Step
			for _, rel := range slices.Sorted(maps.Keys(r.Steps)) {
				s := r.Steps[rel]
				if info, ok := schema.LookupScenario(s.Scenario); ok && info.ID == c.ID && s.Product == c.Product &&
					s.Labels["repeat"] == "2" && s.Labels["phase"] == "ladder" && found == nil {
					found = s
				}
			}
			if found == nil {
				bad = append(bad, fmt.Sprintf("%s %s: no window of round 2", c.Product, c.ID))
				continue
			}
			n++
			starts[found.Scenario] = append(starts[found.Scenario], found.Start)
		}
		for _, s := range slices.Sorted(maps.Keys(starts)) {
			ts := starts[s]
			if d := slices.MaxFunc(ts, time.Time.Compare).Sub(slices.MinFunc(ts, time.Time.Compare)); d > time.Minute {
				bad = append(bad, fmt.Sprintf("%s: round 2's windows %s apart, want the products side by side", s, d.Round(time.Second)))
			}
		}
		twins := 0
		for _, s := range r.Steps {
			if s.Labels["phase"] == "twin" {
				twins++
			}
		}
		if twins == 0 {
			bad = append(bad, "no A/A twin window")
		}
		first := strings.Join(strings.SplitN(r.Comparison, "\n", 41)[:min(40, strings.Count(r.Comparison, "\n"))], "\n")
		if !strings.Contains(first, "| Scenario | Fastest, capacity/s [95%] |") {
			bad = append(bad, "the first 40 lines of COMPARISON.md have no verdict table")
		}
		if len(bad) > 0 {
			return "", fmt.Errorf("interleaved round: %s", strings.Join(bad, "; "))
		}
		return fmt.Sprintf("%d cells measured again side by side in round 2, %d A/A twin windows, the verdict table first", n, twins), nil
	}
}

// sustainedRespected: every rate-mode window of the run, judged again by
// the sustain rule from its own intervals (aggregate sustained), is judged
// -- the quick profile's windows have the intervals the rule needs -- with
// the verdict the run recorded, and COMPARISON.md shows no latency from a
// window not sustained.
func sustainedRespected(r *Run) (string, error) {
	in := &model.Inputs{}
	for _, rel := range slices.Sorted(maps.Keys(r.Steps)) {
		in.Steps = append(in.Steps, model.StepFile{Path: filepath.Join(r.Dir, rel), Step: r.Steps[rel]})
	}
	ws := sustaincheck.Windows(in)
	sum := sustaincheck.Summarize(ws)
	switch {
	case sum.Windows == 0:
		return "", fmt.Errorf("no rate-mode window in %s", r.Dir)
	case sum.NotJudged > 0:
		return "", fmt.Errorf("%d of %d rate-mode windows not judged whether sustained (too few intervals)", sum.NotJudged, sum.Windows)
	}
	if probs := sustaincheck.Problems(r.Comparison, ws); len(probs) > 0 {
		return "", fmt.Errorf("the sustain rule: %s", strings.Join(probs, "; "))
	}
	return fmt.Sprintf("%d rate-mode windows judged again: %d sustained, %d not; the report shows no latency from one not sustained", sum.Windows, sum.Sustained, sum.NotSustained), nil
}

// sharesMeasured: every steady cell of the products has its windows at 50%
// and 80% of its capacity, in rate mode at that share of the headline
// capacity (to the hundredth); each share has its figures or says why not,
// and every product has figures at some share.
func sharesMeasured(products ...string) func(*Run) (string, error) {
	return func(r *Run) (string, error) {
		var bad []string
		n, na := 0, 0
		for _, p := range products {
			figures := 0
			for _, c := range r.Cells {
				if c.Product != p || !c.Steady || c.Capacity == nil {
					continue
				}
				capQPS := c.Capacity.Raw.Median // the run's target: the raw capacity
				for _, share := range []int{50, 80} {
					i := slices.IndexFunc(c.Shares, func(s model.ShareRow) bool { return s.Share == share })
					if i < 0 {
						bad = append(bad, fmt.Sprintf("%s %s: no windows at %d%% of its capacity", p, c.ID, share))
						continue
					}
					sh := c.Shares[i]
					n++
					want := math.Round(capQPS*float64(share)) / 100
					switch {
					case math.Abs(sh.RateRPS-want) > 0.011:
						bad = append(bad, fmt.Sprintf("%s %s at %d%%: rate %g/s, want %g/s (of a capacity of %g/s)", p, c.ID, share, sh.RateRPS, want, capQPS))
					case sh.NA != "":
						na++
					case !(sh.P50.Median > 0 && sh.P50.Median <= sh.P95.Median && sh.P95.Median <= sh.P99.Median):
						bad = append(bad, fmt.Sprintf("%s %s at %d%%: P50 %g, P95 %g, P99 %g ms: want 0 < P50 <= P95 <= P99", p, c.ID, share, sh.P50.Median, sh.P95.Median, sh.P99.Median))
					default:
						figures++
					}
				}
			}
			if figures == 0 {
				bad = append(bad, p+": no latency at any share of capacity")
			}
		}
		if len(bad) > 0 {
			return "", fmt.Errorf("windows at shares of capacity: %s", strings.Join(bad, "; "))
		}
		return fmt.Sprintf("%d shares of %s measured at the share of their capacity (%d N/A with a reason)", n, strings.Join(products, ", "), na), nil
	}
}
