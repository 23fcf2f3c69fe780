package run

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Order is how a run orders the windows after round 1 (docs/design-methodology.md,
// "Randomized order"): round 1 keeps the products' and scenarios' order, so
// every ladder is traced from the same start (a JVM's JIT warms up on
// discovery at c=2 first); every later round draws a new order of the
// products and, within each product's round, of its scenarios, so a slow
// spell of the machine falls on a different product and cell each round
// instead of on the same one every time (randomized multiple interleaved
// trials, Abedi & Brecht, ICPE 2017). The draw is seeded, so a resumed run
// repeats it.
type Order struct {
	Random bool   // IDPBENCH_ORDER=random (the default); fixed: every round as round 1
	Seed   uint64 // IDPBENCH_ORDER_SEED; default a hash of the run id
}

// parseOrder reads IDPBENCH_ORDER and IDPBENCH_ORDER_SEED; runID seeds
// the draw when no seed is given.
func parseOrder(getenv func(string) string, runID string) (Order, error) {
	o := Order{Random: true}
	switch v := cmpOr(getenv("IDPBENCH_ORDER"), "random"); v {
	case "random":
	case "fixed":
		o.Random = false
	default:
		return o, usageError{fmt.Sprintf("IDPBENCH_ORDER %s: want random or fixed", v)}
	}
	if v := getenv("IDPBENCH_ORDER_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return o, usageError{fmt.Sprintf("IDPBENCH_ORDER_SEED %s: want a whole number", v)}
		}
		o.Seed = seed
		return o, nil
	}
	h := fnv.New64a()
	h.Write([]byte(runID))
	o.Seed = h.Sum64()
	return o, nil
}

// Of is items in the order of round round, drawn for what ("" for the
// products, a product's name for its scenarios): items itself in round 1
// or when the order is fixed, else a permutation of a copy that depends
// only on the seed, the round, what and the items.
func (o Order) Of(round int, what string, items []string) []string {
	if !o.Random || round <= 1 || len(items) < 2 {
		return items
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s", round, what)
	for _, it := range items {
		fmt.Fprintf(h, "\x00%s", it)
	}
	rng := rand.New(rand.NewPCG(o.Seed, h.Sum64()))
	out := slices.Clone(items)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
