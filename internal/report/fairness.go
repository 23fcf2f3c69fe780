package report

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

func (m *md) fairness() {
	m.printf("## Fairness and limitations\n\n")
	for _, p := range m.r.Products {
		m.productFairness(p)
	}
	m.limitedSteps()
	m.naList()
	m.missingRecords()
	m.otherRecords()
}

func (m *md) productFairness(p model.Product) {
	m.printf("### %s\n\n", p.Name)
	if p.Meta == nil {
		m.printf("- No meta file: configuration, deviations and warmups are not recorded for this product.\n\n")
		return
	}
	mt := p.Meta
	m.printf("- Version: %s; status: %s (%s)\n", orUnknown(p.Version), orUnknown(mt.Status), m.link(p.MetaPath))
	if p.NA {
		m.printf("- N/A: %s\n", cmp.Or(mt.NAReason, "no reason given"))
	}
	m.quiet = p.NA // a product that did not run lists only what its meta has
	defer func() { m.quiet = false }()
	m.placement(mt.Placement)
	m.rounds(mt.Rounds)
	m.list("Configuration sources", len(mt.ConfigSources), func(i int) string {
		return fmt.Sprintf("[%s](%s)", mt.ConfigSources[i].What, mt.ConfigSources[i].URL)
	})
	m.list("Deviations from official defaults", len(mt.Deviations), func(i int) string {
		return mt.Deviations[i].What + " — " + mt.Deviations[i].Why
	})
	if len(mt.Warmups) > 0 { // metas from before the one warmup rule
		m.list("Warmups other than the default", len(mt.Warmups), func(i int) string {
			w := mt.Warmups[i]
			return fmt.Sprintf("%s: %s — %s", cmp.Or(w.Scenario, "every scenario"), steps.FormatSeconds(w.WarmupS), w.Why)
		})
	}
	m.warmups(p.Name)
	if pools := m.stepPools(p.Name); len(mt.Pools) == 0 && len(pools) > 0 {
		m.list("Pools (from the steps; the meta lists none)", len(pools), func(i int) string { return pools[i] })
	} else {
		m.list("Pools", len(mt.Pools), func(i int) string {
			pl := mt.Pools[i]
			return fmt.Sprintf("%s: %d %s (%s, minted by %s)", pl.Scenario, pl.Size, pl.Kind, pl.Mode, pl.Flow)
		})
	}
	if res := m.resources(p.Name); res != nil && !p.NA {
		m.printf("- PostgreSQL client connections observed (max over the steady-state windows): %s\n", fig(res.ConnsMax, formatCount))
	}
	m.list("Configuration in force (read from the running product or its database after setup, else documented)",
		len(mt.Facts), func(i int) string { return factText(mt.Facts[i]) })
	m.list("Known limitations of the product that shape a result", len(mt.Known), func(i int) string {
		return knownText(mt.Known[i])
	})
	if len(mt.Settings) > 0 {
		m.printf("- Settings given by this run: %s\n", kvText(mt.Settings))
	}
	if len(mt.Database) > 0 {
		m.printf("- Database: %s\n", kvText(mt.Database))
	}
	if len(mt.Images) > 0 { // compose mode only
		m.list("Images the containers ran (the image ID is the sha256 of the image's configuration)",
			len(mt.Images), func(i int) string { return imageText(mt.Images[i]) })
	}
	m.list("Notes", len(mt.Notes), func(i int) string { return mt.Notes[i] })
	m.printf("\n")
}

// imageText is one container's image: its service, the image and its ID,
// and whether it is the official image or a local equivalent (of which).
func imageText(im schema.Image) string {
	origin := "official"
	if im.Origin == schema.ImageLocal {
		origin = "local equivalent of " + im.StandsFor + ", built here (the official image could not be pulled)"
	}
	return fmt.Sprintf("%s: %s (%s), %s", im.Service, im.Ref, im.ID, origin)
}

// placement states where the run put the load generator and the product
// (the meta's placement), one line.
func (m *md) placement(pl *schema.Placement) {
	if pl == nil && m.quiet {
		return
	}
	m.printf("- Placement: %s\n", placementText(pl))
}

// rounds states how the run repeated the product's ladders, one line.
func (m *md) rounds(r *schema.Rounds) {
	if r == nil && m.quiet {
		return
	}
	m.printf("- Rounds: %s\n", roundsText(r))
}

func roundsText(r *schema.Rounds) string {
	switch {
	case r == nil:
		return "not recorded (a meta from before the rounds were recorded: each product's rounds ran back to back)"
	case r.Order == schema.RoundsInterleaved:
		return fmt.Sprintf("%d, interleaved with the other products' (round r of every product, then round r+1): "+
			"a cell's windows come from stretches of the run minutes apart; between its rounds the product stayed up, idle", r.Count)
	case r.Order == schema.RoundsRandom:
		return fmt.Sprintf("%d, interleaved with the other products' (round r of every product, then round r+1), every round after the first "+
			"in a drawn order of the products and of each product's scenarios (seed %d): a slow spell of the machine falls on a different cell each round; "+
			"between its rounds the product stayed up, idle", r.Count, r.Seed)
	default:
		return fmt.Sprintf("%d", r.Count)
	}
}

func placementText(pl *schema.Placement) string {
	switch {
	case pl == nil:
		return "not recorded (a meta from before placement was recorded)"
	case pl.Mode == schema.PlacementPinned:
		return fmt.Sprintf("load generator and sampler on CPUs %s, product and PostgreSQL on CPUs %s (pinned; %d CPUs)",
			pl.DriverCPUs, pl.ServerCPUs, pl.HostCPUs)
	default:
		return "shared: " + cmp.Or(pl.Reason, fmt.Sprintf("%d CPUs, nothing pinned", pl.HostCPUs))
	}
}

// factText is a fact with its provenance: read from where, or documented
// where.
func factText(f schema.Fact) string {
	if f.Source == schema.FactRead {
		return fmt.Sprintf("%s: %s (read: %s)", f.Name, f.Value, f.From)
	}
	return fmt.Sprintf("%s: %s (%s: %s)", f.Name, f.Value, cmp.Or(f.Source, "source not given"), f.From)
}

// knownText is a known limitation with the scenario it shapes and its
// reference.
func knownText(k schema.Known) string {
	s := k.What + " (" + k.Ref + ")"
	if info, ok := schema.LookupScenario(k.Scenario); ok {
		return info.ID + " " + info.Name + ": " + s
	}
	return s
}

// list renders a titled bullet with one sub-bullet per item, or "none".
func (m *md) list(title string, n int, item func(int) string) {
	if n == 0 {
		if !m.quiet {
			m.printf("- %s: none recorded\n", title)
		}
		return
	}
	m.printf("- %s:\n", title)
	for i := range n {
		m.printf("  - %s\n", strings.Join(strings.Fields(item(i)), " "))
	}
}

func (m *md) limitedSteps() {
	m.printf("### Driver-limited steps\n\n")
	if len(m.r.Limited) == 0 {
		m.printf("None: the load generator had CPU to spare in every step.\n\n")
		return
	}
	m.printf("These steps are lower bounds (the driver, not the product, set the pace):\n\n")
	for _, sf := range m.r.Limited {
		s := sf.Step
		why := s.Driver.LimitedReason
		if why == "" { // a record from before limited_reason
			why = fmt.Sprintf("driver CPU %s%% with GOMAXPROCS %d", steps.FormatMS(s.Driver.CPUPct), s.Driver.GOMAXPROCS)
		}
		m.printf("- %s %s c=%d%s: %s qps, %s (%s)\n",
			sf.Product(), scenarioLabel(s.Scenario), s.Connections, phaseNote(s),
			steps.FormatQPS(s.QPS), why, m.link(sf.Path))
	}
	m.printf("\n")
}

func scenarioLabel(name string) string {
	if info, ok := schema.LookupScenario(name); ok {
		return info.ID + " " + name
	}
	return name
}

func phaseNote(s *schema.Step) string {
	if model.IsLadder(s) {
		return ""
	}
	return " (phase " + s.Labels["phase"] + ")"
}

func (m *md) naList() {
	m.printf("### Not available\n\n")
	if len(m.r.NA) == 0 {
		m.printf("Every product has a steady state in every scenario.\n\n")
		return
	}
	for _, c := range m.r.NA {
		m.printf("- %s %s — %s: %s\n", c.Scenario.ID, c.Scenario.Name, c.Product, c.NAReason)
	}
	m.printf("\n")
}

// otherRecords lists records that no section shows: steps outside the
// ladders other than each product's GC-jitter run, and sampler files no
// product could be found for.
func (m *md) otherRecords() {
	r := m.r
	shown := map[string]bool{}
	for _, j := range r.Jitter {
		shown[j.File.Path] = j.File.Step != nil
	}
	var lines []string
	for _, sf := range r.Other {
		if shown[sf.Path] {
			continue
		}
		s := sf.Step
		lines = append(lines, fmt.Sprintf("%s %s c=%d%s, %s (%s)", sf.Product(), scenarioLabel(s.Scenario),
			s.Connections, phaseNote(s), steps.FormatSeconds(s.DurationS), m.link(sf.Path)))
	}
	for _, p := range r.Unattributed {
		lines = append(lines, fmt.Sprintf("sampler records of no known product (%s)", m.link(p)))
	}
	if len(lines) == 0 {
		return
	}
	m.printf("### Records read but not shown in this report\n\n")
	for _, l := range lines {
		m.printf("- %s\n", l)
	}
	m.printf("\n")
}

// stepPools lists the distinct pools the product's steps name.
func (m *md) stepPools(product string) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range m.r.Cells {
		for _, ls := range c.Ladder {
			if pl := ls.Step.Pool; c.Product == product && pl != nil {
				s := fmt.Sprintf("%s: %d %s (%s)", c.Scenario.Name, pl.Size, cmp.Or(pl.Kind, "credentials"), pl.Mode)
				if !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func (m *md) resources(product string) *model.Resources {
	for i := range m.r.Resources {
		if m.r.Resources[i].Product == product {
			return &m.r.Resources[i]
		}
	}
	return nil
}

// missingRecords lists, per product, every figure outside the main table
// that is N/A and why.
func (m *md) missingRecords() {
	m.printf("### Missing records and figures\n\n")
	found := false
	for i, p := range m.r.Products {
		items := m.missingFor(p, i)
		if len(items) == 0 {
			continue
		}
		found = true
		m.printf("- %s: %s\n", p.Name, strings.Join(items, "; "))
	}
	if !found {
		m.printf("None: every product has samples, cold starts A and B, and a gap-free GC-jitter run.\n")
	}
	m.printf("\n")
}

func (m *md) missingFor(p model.Product, i int) []string {
	if p.NA {
		return []string{"did not run, so no samples, cold start or GC jitter"}
	}
	r := m.r
	var out []string
	add := func(what string, f model.Figure) {
		if !f.OK {
			out = append(out, what+": "+f.NA)
		}
	}
	res := r.Resources[i]
	if res.NA != "" {
		out = append(out, "memory and database figures: "+res.NA)
	} else {
		add("IdP memory", res.IdPRSS)
		add("PostgreSQL memory", res.DBRSS)
		if res.IdPRSS.OK && res.DBRSS.OK {
			add("full-stack memory", res.StackRSS)
		}
	}
	for _, u := range res.Steps {
		if u.VerdictKind == model.VerdictNA {
			out = append(out, fmt.Sprintf("%s %s bottleneck verdict: %s", u.Scenario.ID, u.Scenario.Name, strings.TrimPrefix(u.Verdict, "N/A: ")))
		}
	}
	if res.TopNA != "" && res.NA == "" {
		out = append(out, "top queries: "+res.TopNA)
	}
	for _, c := range []model.Coldstart{r.Cold[i].A, r.Cold[i].B} {
		if c.NA != "" {
			out = append(out, "cold start "+c.Mode+": "+c.NA)
		}
	}
	if j := r.Jitter[i]; j.NA != "" {
		out = append(out, "GC jitter: "+j.NA)
	} else if len(j.Gaps) > 0 {
		out = append(out, "GC-jitter intervals not contiguous: "+strings.Join(j.Gaps, ", "))
	}
	return out
}
