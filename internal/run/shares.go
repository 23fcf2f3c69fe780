package run

import (
	"context"
	"math"
	"path/filepath"
	"slices"

	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/model"
)

// shareTarget is one cell's windows at shares of its capacity.
type shareTarget struct {
	Scenario    string
	CapacityQPS float64 // the headline capacity's median
	Connections int     // ShareConnections
}

// MaxShareConnections bounds ShareConnections.
const MaxShareConnections = 512

// ShareConnections is how many connections carry a cell's windows at
// shares of capacity: twice the plateau's most (those carried the whole
// capacity in a closed loop), or more, enough for twice the capacity's
// requests in flight at the P99 there (p99 ms), at most
// MaxShareConnections. Each connection sends rate/c on its own schedule,
// so a slow answer delays its next sends: the headroom lets a burst queue
// in the product, not behind a busy connection of the load generator.
func ShareConnections(plateauMost int, capacityQPS, p99 float64) int {
	c := max(2*plateauMost, int(math.Ceil(2*capacityQPS*p99/1000)))
	return min(c, MaxShareConnections)
}

// ShareTargets are product p's cells in rep that have a capacity, in
// scenarios order: what its windows at shares of capacity run at, on
// ShareConnections.
func ShareTargets(rep *model.Report, p string, scenarios []string) []shareTarget {
	var out []shareTarget
	for _, s := range scenarios {
		i := slices.IndexFunc(rep.Cells, func(c model.Cell) bool {
			return c.Product == p && c.Scenario.Name == s && c.SteadyLevel >= 0
		})
		if i < 0 {
			continue
		}
		c := rep.Cells[i]
		// The raw capacity: the adjusted one moves with the reference
		// probe, the median over every product's windows, which the
		// products still to come change.
		t := shareTarget{Scenario: s, CapacityQPS: c.Capacity.Raw.Center}
		p99 := 0.0 // ms, at the plateau's most connections
		for _, l := range c.Capacity.Levels {
			if c.Levels[l].Connections >= t.Connections {
				t.Connections, p99 = c.Levels[l].Connections, c.Levels[l].P99MS.Median
			}
		}
		t.Connections = ShareConnections(t.Connections, t.CapacityQPS, p99)
		if t.CapacityQPS > 0 && t.Connections > 0 {
			out = append(out, t)
		}
	}
	return out
}

// shares measures product p's windows at shares of each steady cell's
// capacity (ladder.RunShares), read from its records so far; it returns
// the action of the first that did not end well and what it was.
func (r *runner) shares(ctx context.Context, p, state string) (action, int, string) {
	if len(r.Shares.Shares) == 0 {
		return actNext, 0, ""
	}
	in, err := model.Load(ctx, []string{filepath.Join(r.runDir, p)}, nil, func(string) {})
	if err != nil {
		r.log.Printf("%s: no windows at shares of capacity: reading its records: %v", p, err)
		return actNext, 0, ""
	}
	targets := ShareTargets(model.Build(in, model.Options{}), p, r.Scenarios)
	if len(targets) == 0 {
		r.log.Printf("%s: no windows at shares of capacity: no cell has a capacity", p)
	}
	for i, t := range targets {
		r.phase("share", p, p+" shares "+t.Scenario)
		o := ladder.Options{Product: p, Scenario: t.Scenario, Quick: r.Quick, Where: r.where(state)}
		c, err := ladder.NewConfig(o, r.env.Getenv)
		windows := 0
		if err == nil {
			deadline := r.searchDeadline(ctx, p, len(targets)-i-1)
			windows, err = ladder.RunShares(ctx, c, r.ladderEnv(p), t.CapacityQPS, t.Connections, deadline)
		}
		r.step += windows
		code := exitOf(err, "ladder", r)
		if a := ladderAction(code); a != actNext {
			return a, code, t.Scenario + " windows at shares of capacity"
		}
	}
	return actNext, 0, ""
}
