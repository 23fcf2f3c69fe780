package products

import (
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/composefile"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
	"github.com/idpbench/idpbench/products/hydra"
)

// contract holds one product's declarations to what every product owes
// the benchmark (docs/design-reference.md, "Products"), from the repository root:
// its folder with its adapter, every scenario either run or N/A with a
// reason, its part complete in both modes with every source an https URL,
// its answers on loopback, its readback and server-metric series or why
// not, its docs page naming the version its adapter pins, and the compose
// file its adapter's compose mode runs. It returns what is missing, one
// sentence each, naming the product.
func contract(root string, p product.Product) []string {
	var bad []string
	fail := func(format string, a ...any) { bad = append(bad, p.Name+": "+fmt.Sprintf(format, a...)) }
	if !regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(p.Name) {
		fail("the name %q is not a lower-case word (it names the folder, the results and the adapter's PRODUCT)", p.Name)
		return bad
	}
	adapter := filepath.Join(root, "products", p.Name, "adapter")
	if fi, err := os.Stat(adapter); err != nil || fi.Mode()&0o111 == 0 {
		fail("no executable adapter at products/%s/adapter (the shell entry points: docs/design.md, the adapter interface)", p.Name)
	}
	bad = append(bad, scenarioContract(p)...)
	bad = append(bad, partContract(p)...)
	switch {
	case p.ReadFacts == nil && p.ReadFactsNA == "":
		fail("no ReadFacts and no ReadFactsNA: say what is read back from the running product, or why nothing is")
	case p.ReadFacts != nil && p.ReadFactsNA != "":
		fail("both ReadFacts and ReadFactsNA")
	case p.ReadFacts != nil && p.ReadFactsFrom == "":
		fail("ReadFacts without ReadFactsFrom: say which of readback's flags it reads, and what (readback --help lists it)")
	case p.Answers != nil && p.Answers.Readback != nil && p.ReadFacts == nil:
		fail("its answers give readback arguments (Answers.Readback) but readback knows nothing to read (no ReadFacts)")
	}
	if p.ServerMetrics.Empty() {
		fail("no ServerMetrics: name the series that count each scenario's requests, or say why there are none (ServerMetrics.NA)")
	}
	bad = append(bad, seriesContract(root, p)...)
	bad = append(bad, docsContract(root, p, adapter)...)
	bad = append(bad, composeContract(root, p, adapter)...)
	bad = append(bad, naByDesignContract(p, adapter)...)
	return bad
}

// naByDesignContract: every reason a product declares N/A by design
// (NAByDesign) is said, word for word, by its adapter, so that a reworded
// failure cannot turn a declared N/A into a failed run, nor the other way.
func naByDesignContract(p product.Product, adapter string) []string {
	var bad []string
	b, _ := os.ReadFile(adapter)
	for _, r := range p.NAByDesign {
		if r == "" || !strings.Contains(string(b), r) {
			bad = append(bad, fmt.Sprintf("%s: NAByDesign %q is not a reason its adapter (%s) gives", p.Name, r, adapter))
		}
	}
	return bad
}

// scenarioContract: every benchmark scenario is either answered (the
// product's scenario table, asked with product.AnyState) or N/A with a
// reason, never both; an answered one is measured on loopback.
func scenarioContract(p product.Product) []string {
	var bad []string
	fail := func(format string, a ...any) { bad = append(bad, p.Name+": "+fmt.Sprintf(format, a...)) }
	for s, why := range p.NA {
		if !slices.Contains(product.Scenarios(), s) || strings.TrimSpace(why) == "" {
			fail("N/A %q (%q): not a benchmark scenario, or no reason", s, why)
		}
	}
	if p.TakesConfig { // the generic adapter: its configuration decides (provision oidc na)
		return bad
	}
	if p.Answers == nil || p.Answers.Table == nil {
		fail("no answers (Answers.Table): the adapter cannot be told any scenario's endpoint")
		return bad
	}
	table := p.Answers.Table(product.AnyState("/nonexistent", p.Name))
	for _, s := range product.Scenarios() {
		sc, runs := table.Scenarios[s]
		switch why := p.NA[s]; {
		case runs && why != "":
			fail("%s is both answered and N/A (%q)", s, why)
		case !runs && why == "":
			fail("%s has no way to run and no N/A reason: answer it in the scenario table or say why it cannot run (NA)", s)
		case runs:
			u, err := url.Parse(sc.Endpoint)
			if err != nil || !loopback(u.Hostname()) {
				fail("%s is measured at %q: want a URL on 127.0.0.1 or localhost", s, sc.Endpoint)
			}
		}
	}
	if p.Answers.Config != nil {
		cfg := p.Answers.Config(product.AnyState("/nonexistent", p.Name))
		if m := regexp.MustCompile(`0\.0\.0\.0|\[::\]|::/0`).FindString(cfg); m != "" {
			fail("its configuration file binds %s: every port stays on loopback", m)
		}
	}
	return bad
}

func loopback(host string) bool { return host == "127.0.0.1" || host == "localhost" || host == "::1" }

// partContract: the meta part, in both modes, states settings, notes and
// deviations with their reasons, every source and known limitation an
// https URL.
func partContract(p product.Product) []string {
	var bad []string
	fail := func(format string, a ...any) { bad = append(bad, p.Name+": "+fmt.Sprintf(format, a...)) }
	if p.Part == nil {
		fail("no Part: the meta's settings, sources and deviations")
		return bad
	}
	in := product.Inputs{Version: "1.0", Params: map[string]string{}}
	if p.TakesConfig { // the generic adapter's sources are its configuration's
		in.Config.Sources = []schema.Link{{What: "docs", URL: "https://example.com"}}
	}
	for _, prm := range p.Params {
		in.Params[prm.Name] = "P-" + prm.Name
		if prm.Doc == "" {
			fail("parameter %s says nothing of where the adapter takes it from", prm.Name)
		}
	}
	for _, mode := range []string{product.ModeNative, product.ModeCompose} {
		in.Mode = mode
		if err := p.Check(in); err != nil {
			fail("%s: %v", mode, err)
			continue
		}
		m := p.Part(in)
		if len(m.Settings) == 0 || len(m.ConfigSources) == 0 || len(m.Deviations) == 0 || len(m.Notes) == 0 {
			fail("%s: a part without settings, configuration sources, deviations or notes", mode)
		}
		for _, d := range m.Deviations {
			if d.What == "" || d.Why == "" {
				fail("%s: a deviation without what or why: %+v", mode, d)
			}
		}
		for _, l := range m.ConfigSources {
			if l.What == "" || !strings.HasPrefix(l.URL, "https://") {
				fail("%s: configuration source %+v: want what it is and an https URL", mode, l)
			}
		}
		for _, k := range m.Known {
			if k.What == "" || !strings.HasPrefix(k.Ref, "https://") {
				fail("%s: known limitation %+v: want what it is and an https URL of its source", mode, k)
			}
		}
		for k, v := range m.Settings {
			if v == "" {
				fail("%s: setting %s is empty", mode, k)
			}
		}
	}
	return bad
}

// seriesContract: a product's series were read on the running product, so
// a scrape of it is kept in its testdata (products/NAME/testdata/*.prom)
// and every series selector matches series there with requests counted.
func seriesContract(root string, p product.Product) []string {
	if len(p.ServerMetrics.Scenarios) == 0 {
		return nil
	}
	scrapes, _ := filepath.Glob(filepath.Join(root, "products", p.Name, "testdata", "*.prom"))
	if len(scrapes) == 0 {
		return []string{p.Name + ": ServerMetrics names series but products/" + p.Name + "/testdata holds no scrape of the running product (*.prom) they were read from"}
	}
	var bad []string
	for _, file := range scrapes {
		fams, err := servermetrics.ParseFile(file)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", p.Name, err))
			continue
		}
		for _, scenario := range slices.Sorted(maps.Keys(p.ServerMetrics.Scenarios)) {
			sel := p.ServerMetrics.Scenarios[scenario]
			if w, err := servermetrics.Delta(servermetrics.Families{}, fams, sel); err != nil || w.Requests == 0 {
				bad = append(bad, fmt.Sprintf("%s: %s's series %s count no requests in %s (%v)", p.Name, scenario, sel, filepath.Base(file), err))
			}
		}
	}
	return bad
}

// pinned finds the version an adapter pins: PRODUCT_VERSION=V or
// PRODUCT_VERSION="${VAR:-V}"; "" when it pins none (the generic adapter
// takes its configuration's).
var pinned = regexp.MustCompile(`(?m)^PRODUCT_VERSION="?(?:\$\{[A-Z_]+:-)?(v?[0-9][0-9A-Za-z.+-]*?)\}?"?(?:\s|$)`)

// docsContract: the docs page exists and names the version the adapter
// pins.
func docsContract(root string, p product.Product, adapter string) []string {
	if p.Docs == "" {
		return []string{p.Name + ": no docs page (Docs): the verified facts, docs/products/" + p.Name + ".md"}
	}
	page, err := os.ReadFile(filepath.Join(root, p.Docs))
	if err != nil {
		return []string{fmt.Sprintf("%s: its docs page %s: %v", p.Name, p.Docs, err)}
	}
	text, err := os.ReadFile(adapter)
	if err != nil {
		return nil // the adapter's absence is said already
	}
	if m := pinned.FindSubmatch(text); m != nil && !strings.Contains(string(page), string(m[1])) {
		return []string{fmt.Sprintf("%s: its docs page %s does not name the version its adapter pins, %s", p.Name, p.Docs, m[1])}
	}
	return nil
}

// runsCompose finds an adapter's compose mode: the compose.sh functions
// that install and bring up a product's compose file.
var runsCompose = regexp.MustCompile(`\bcompose_(install|init)\b`)

// composeContract: a product whose adapter runs compose mode declares its
// compose file (ComposeFile), in its folder as products/NAME/compose.yml,
// where compose mode (scripts/lib/compose.sh) looks; a declared one is
// there and loads (internal/composefile: extends resolved, unknown keys
// refused), and every image it builds has its recipe, the build context
// and Dockerfile, beside it (compose.sh runs a file with its own folder as
// the project directory, which relative paths resolve against).
func composeContract(root string, p product.Product, adapter string) []string {
	var bad []string
	fail := func(format string, a ...any) { bad = append(bad, p.Name+": "+fmt.Sprintf(format, a...)) }
	want := "products/" + p.Name + "/compose.yml"
	if p.ComposeFile == "" {
		if text, err := os.ReadFile(adapter); err == nil && runsCompose.Match(text) {
			fail("its adapter runs compose mode (compose_install, compose_init) but the entry declares no compose file (ComposeFile: %s)", want)
		}
		if _, err := os.Stat(filepath.Join(root, want)); err == nil {
			fail("%s is there but the entry declares no compose file (ComposeFile)", want)
		}
		return bad
	}
	if p.ComposeFile != want {
		fail("its compose file (ComposeFile) is %s: compose mode runs %s, in the product's folder", p.ComposeFile, want)
	}
	file := filepath.Join(root, filepath.FromSlash(p.ComposeFile))
	if _, err := os.Stat(file); err != nil {
		fail("its compose file %s (ComposeFile) is not there", p.ComposeFile)
		return bad
	}
	proj, err := composefile.Load(file)
	if err != nil {
		fail("its compose file %s does not load: %v", p.ComposeFile, err)
		return bad
	}
	for _, name := range proj.Order {
		context, dockerfile := proj.Services[name].Recipe()
		if context == "" {
			continue
		}
		recipe := filepath.Join(filepath.Dir(p.ComposeFile), context, dockerfile)
		if _, err := os.Stat(filepath.Join(root, recipe)); err != nil {
			fail("its compose file %s builds service %q from %s, which is not there", p.ComposeFile, name, filepath.ToSlash(recipe))
		}
	}
	return bad
}

// TestContract: every registered product keeps the contract, and the
// registry names each once.
func TestContract(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range All() {
		if seen[p.Name] {
			t.Errorf("%s is registered twice", p.Name)
		}
		seen[p.Name] = true
		for _, b := range contract("..", p) {
			t.Error(b)
		}
	}
}

// TestContractCatches: a product that forgets something fails, saying
// what; each break is one a new product could make.
func TestContractCatches(t *testing.T) {
	for name, tc := range map[string]struct {
		breakIt func(p *product.Product)
		want    string
	}{
		"an N/A without its reason": {func(p *product.Product) { p.NA["jwt_bearer"] = "" },
			`hydra: N/A "jwt_bearer" (""): not a benchmark scenario, or no reason`},
		"a scenario neither run nor N/A": {func(p *product.Product) { delete(p.NA, "jwt_bearer") },
			"hydra: jwt_bearer has no way to run and no N/A reason"},
		"a source without its URL": {func(p *product.Product) {
			part := p.Part
			p.Part = func(in product.Inputs) schema.Meta {
				m := part(in)
				m.ConfigSources = append(m.ConfigSources, schema.Link{What: "a blog post"})
				return m
			}
		}, `hydra: native: configuration source {What:a blog post URL:}: want what it is and an https URL`},
		"no docs page": {func(p *product.Product) { p.Docs = "docs/products/nosuch.md" },
			"hydra: its docs page docs/products/nosuch.md: open ../docs/products/nosuch.md: no such file or directory"},
		"readback unsaid": {func(p *product.Product) { p.ReadFacts = nil },
			"hydra: no ReadFacts and no ReadFactsNA"},
		"readback's sources unsaid": {func(p *product.Product) { p.ReadFactsFrom = "" },
			"hydra: ReadFacts without ReadFactsFrom"},
		"server metrics unsaid": {func(p *product.Product) { p.ServerMetrics.Scenarios = nil },
			"hydra: no ServerMetrics"},
		"a series the scrape does not have": {func(p *product.Product) {
			p.ServerMetrics.Scenarios = maps.Clone(p.ServerMetrics.Scenarios)
			p.ServerMetrics.Scenarios["discovery"] = servermetrics.Selector{Family: "http_requests_duration_seconds", Match: map[string]string{"endpoint": "/nosuch"}, Status: "code"}
		}, "hydra: discovery's series http_requests_duration_seconds{endpoint=\"/nosuch\"} count no requests in hydra-v2.3.0.prom"},
		"another name, no folder": {func(p *product.Product) { p.Name = "hydra2" },
			"hydra2: no executable adapter at products/hydra2/adapter"},
		"compose mode without its file": {func(p *product.Product) { p.ComposeFile = "" },
			"hydra: its adapter runs compose mode (compose_install, compose_init) but the entry declares no compose file (ComposeFile: products/hydra/compose.yml)"},
		"a compose file undeclared": {func(p *product.Product) { p.ComposeFile = "" },
			"hydra: products/hydra/compose.yml is there but the entry declares no compose file (ComposeFile)"},
		"a compose file outside its folder": {func(p *product.Product) { p.ComposeFile = "deploy/compose/compose.postgres.yml" },
			"hydra: its compose file (ComposeFile) is deploy/compose/compose.postgres.yml: compose mode runs products/hydra/compose.yml, in the product's folder"},
		"a compose file not there": {func(p *product.Product) { p.ComposeFile = "products/hydra/nosuch.yml" },
			"hydra: its compose file products/hydra/nosuch.yml (ComposeFile) is not there"},
		"a compose file that does not load": {func(p *product.Product) { p.ComposeFile = "products/testdata/compose/typo.yml" },
			`hydra: its compose file products/testdata/compose/typo.yml does not load: ../products/testdata/compose/typo.yml: service "hydra": yaml: unmarshal errors:`},
		"an N/A by design its adapter never says": {func(p *product.Product) { p.NAByDesign = product.Reasons{"no registry serves Hydra"} },
			`hydra: NAByDesign "no registry serves Hydra" is not a reason its adapter (../products/hydra/adapter) gives`},
		"an image without its recipe": {func(p *product.Product) { p.ComposeFile = "products/testdata/compose/no-recipe.yml" },
			`hydra: its compose file products/testdata/compose/no-recipe.yml builds service "hydra" from products/testdata/compose/nosuch/Dockerfile, which is not there`},
	} {
		t.Run(name, func(t *testing.T) {
			p := hydra.Product()
			tc.breakIt(&p)
			bad := contract("..", p)
			if !slices.ContainsFunc(bad, func(b string) bool { return strings.HasPrefix(b, tc.want) }) {
				t.Errorf("contract said\n%s\nwant a line starting %q", strings.Join(bad, "\n"), tc.want)
			}
		})
	}
	if bad := contract("..", hydra.Product()); len(bad) > 0 {
		t.Errorf("unbroken hydra: %v", bad)
	}
}
