package report

import (
	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/steps"
)

// efficiencyText is a main-table cell: "1,234 / 987", an iteration cell's
// "iter: 24.1 / 21.2", N/A halves with their reasons.
func efficiencyText(e model.Efficiency) string {
	if !e.PerIdP.OK {
		return "N/A: " + cell(e.PerIdP.NA)
	}
	s := steps.FormatQPS(e.PerIdP.Value) + " / " + fig(e.PerStack, steps.FormatQPS)
	if e.Iterations {
		s = "iter: " + s
	}
	return s
}

func (m *md) howToReadEfficiency() {
	m.printf("- **req/CPU-s (IdP / +PG)** is the steady level's successful requests (iterations for S2l and\n")
	m.printf("  S4) divided by the CPU-seconds the IdP's process tree spent over the same measured windows,\n")
	m.printf("  then by those of the IdP plus PostgreSQL. The CPU-seconds integrate the sampler's records\n")
	m.printf("  (each record's CPU since the previous one, over the part of that interval inside the window).\n")
	m.printf("  It is the unit of Keycloak's sizing guide, requests per vCPU-second\n")
	m.printf("  (<%s>), so a figure here can be set\n", model.KeycloakSizingGuide)
	m.printf("  against theirs; unlike QPS it does not depend on how many cores the machine has, nor on the\n")
	m.printf("  CPU the load generator took from the product. It counts only the sampled processes: the\n")
	m.printf("  kernel's network work on their behalf is partly outside them. N/A says why a figure is missing.\n")
	m.printf("- **Server CPU and memory over the run** (under Memory) are percentiles of the sampler's\n")
	m.printf("  records inside every measured window of the product's ladders, steady or not, as Zitadel's\n")
	m.printf("  benchmark reports give them: CPU p50 / p99 / peak in percent of one core, memory p50 / peak.\n")
}

// runUsageTable renders the server CPU and memory over the run.
func (m *md) runUsageTable() {
	m.printf("\n### Server CPU and memory over the run\n\n")
	m.printf("Over every measured window of the product's ladder steps (steady or not); CPU in percent of\n")
	m.printf("one core, p50 / p99 / peak; memory in MiB, p50 / peak (PSS where read, else RSS).\n\n")
	m.printf("| Product | IdP CPU %% | IdP MiB | PostgreSQL CPU %% | PostgreSQL MiB | Measured as | Windows | Records in windows |\n")
	m.printf("|---|--:|--:|--:|--:|---|--:|--:|\n")
	for _, res := range m.r.Resources {
		u := res.Run
		if u.NA != "" {
			m.printf("| %s | N/A: %s | – | – | – | – | %d | %d |\n", res.Product, cell(u.NA), u.Windows, u.Records)
			continue
		}
		m.printf("| %s | %s | %s | %s | %s | %s | %d | %d |\n", res.Product, cpuTriple(u.IdPCPU), memPair(u.IdPMem),
			cpuTriple(u.DBCPU), memPair(u.DBMem), memKinds(model.Resources{IdPMem: u.IdPMemOf, DBMem: u.DBMemOf, DBRSS: u.DBMem.P50}),
			u.Windows, u.Records)
	}
}

// cpuTriple is "45 / 98 / 112", or the N/A reason once.
func cpuTriple(q model.CPUQuantiles) string {
	if !q.P50.OK {
		return "N/A: " + cell(q.P50.NA)
	}
	return formatCPUNum(q.P50.Value) + " / " + formatCPUNum(q.P99.Value) + " / " + formatCPUNum(q.Peak.Value)
}

// memPair is "310 / 342", or the N/A reason once.
func memPair(q model.MemQuantiles) string {
	if !q.P50.OK {
		return "N/A: " + cell(q.P50.NA)
	}
	return formatMiB(q.P50.Value) + " / " + formatMiB(q.Peak.Value)
}

// formatCPUNum is percent of one core without the sign (the header has it).
func formatCPUNum(v float64) string { return steps.SigOrInt(v, 3) }
