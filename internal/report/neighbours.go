package report

import (
	"fmt"
)

// neighboursTable renders what each product used, idle, during the
// others' windows.
func (m *md) neighboursTable() {
	ns := m.r.Neighbours()
	if len(ns) == 0 {
		return
	}
	m.printf("### Side by side: each product idle during the others' windows\n\n")
	m.printf("The interleaved rounds keep every product up while the others are measured (a deviation from\n")
	m.printf("measuring one product at a time, for windows seconds apart). What that costs the product being\n")
	m.printf("measured is what the idle ones still use: each one's own process tree, from its sampler, in the\n")
	m.printf("samples that fall in another product's window (CPU in %% of one core; 200 = both cores).\n\n")
	m.printf("| Product (idle) | others' windows | samples | CPU median %% | CPU max %% | RSS median MiB |\n|---|--:|--:|--:|--:|--:|\n")
	for _, n := range ns {
		m.printf("| %s | %d | %d | %s | %s | %s |\n", n.Product, n.Windows, n.Samples, fmt.Sprintf("%.1f", n.CPUMedian), fmt.Sprintf("%.1f", n.CPUMax), fmt.Sprintf("%.0f", n.RSSMiB))
	}
	m.printf("\n")
}
