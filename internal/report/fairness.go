package report

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/idpbench/idpbench/internal/schema"
)

func (m *md) fairness() {
	m.printf("## Fairness and limitations\n\n")
	for _, p := range m.r.Products {
		m.productFairness(p)
	}
	m.limitedSteps()
	m.naList()
	m.otherRecords()
}

func (m *md) productFairness(p Product) {
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
	m.list("Configuration sources", len(mt.ConfigSources), func(i int) string {
		return fmt.Sprintf("[%s](%s)", mt.ConfigSources[i].What, mt.ConfigSources[i].URL)
	})
	m.list("Deviations from official defaults", len(mt.Deviations), func(i int) string {
		return mt.Deviations[i].What + " — " + mt.Deviations[i].Why
	})
	m.list("Warmups other than the default", len(mt.Warmups), func(i int) string {
		w := mt.Warmups[i]
		return fmt.Sprintf("%s: %s — %s", cmp.Or(w.Scenario, "every scenario"), formatSeconds(w.WarmupS), w.Why)
	})
	m.list("Pools", len(mt.Pools), func(i int) string {
		pl := mt.Pools[i]
		return fmt.Sprintf("%s: %d %s (%s, minted by %s)", pl.Scenario, pl.Size, pl.Kind, pl.Mode, pl.Flow)
	})
	if len(mt.Settings) > 0 {
		m.printf("- Settings: %s\n", kvText(mt.Settings))
	}
	if len(mt.Database) > 0 {
		m.printf("- Database: %s\n", kvText(mt.Database))
	}
	m.list("Notes", len(mt.Notes), func(i int) string { return mt.Notes[i] })
	m.printf("\n")
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
	m.printf("These steps are lower bounds (the driver, not the product, ran out of CPU):\n\n")
	for _, sf := range m.r.Limited {
		s := sf.Step
		m.printf("- %s %s c=%d%s: %s qps, driver CPU %s%% with GOMAXPROCS %d (%s)\n",
			stepProduct(sf), scenarioLabel(s.Scenario), s.Connections, phaseNote(s),
			formatQPS(s.QPS), formatMS(s.Driver.CPUPct), s.Driver.GOMAXPROCS, m.link(sf.Path))
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
	if isLadder(s) {
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

// otherRecords lists what was read but is not rendered by this version.
func (m *md) otherRecords() {
	r := m.r
	if len(r.Other)+len(r.Coldstarts)+len(r.Samples) == 0 {
		return
	}
	m.printf("### Records read but not shown in this report\n\n")
	for _, sf := range r.Other {
		s := sf.Step
		m.printf("- %s %s c=%d%s, %s s (%s)\n", stepProduct(sf), scenarioLabel(s.Scenario),
			s.Connections, phaseNote(s), formatMS(s.DurationS), m.link(sf.Path))
	}
	for _, c := range r.Coldstarts {
		m.printf("- %s cold start, mode %s (%s)\n", c.Coldstart.Product, c.Coldstart.Mode, m.link(c.Path))
	}
	for _, s := range r.Samples {
		m.printf("- sampler records: %d (%s)\n", len(s.Samples), m.link(s.Path))
	}
	m.printf("\n")
}
