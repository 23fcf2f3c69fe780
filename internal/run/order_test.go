package run

import (
	"hash/fnv"
	"slices"
	"strings"
	"testing"
)

func TestParseOrder(t *testing.T) {
	h := fnv.New64a()
	h.Write([]byte("full-20261203"))
	byRunID := h.Sum64() // FNV-1a of the run id
	for _, c := range []struct {
		name  string
		env   map[string]string
		want  Order
		error string
	}{
		{name: "default: random, seeded by the run id", want: Order{Random: true, Seed: byRunID}},
		{name: "fixed", env: map[string]string{"IDPBENCH_ORDER": "fixed"}, want: Order{Seed: byRunID}},
		{name: "seed", env: map[string]string{"IDPBENCH_ORDER_SEED": "42"}, want: Order{Random: true, Seed: 42}},
		{name: "bad order", env: map[string]string{"IDPBENCH_ORDER": "shuffled"}, error: "IDPBENCH_ORDER shuffled: want random or fixed"},
		{name: "bad seed", env: map[string]string{"IDPBENCH_ORDER_SEED": "-3"}, error: "IDPBENCH_ORDER_SEED -3: want a whole number"},
	} {
		got, err := parseOrder(func(k string) string { return c.env[k] }, "full-20261203")
		switch {
		case c.error != "":
			if err == nil || err.Error() != c.error {
				t.Errorf("%s: error %v, want %q", c.name, err, c.error)
			}
		case err != nil || got != c.want:
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	a, _ := parseOrder(func(string) string { return "" }, "run-a")
	b, _ := parseOrder(func(string) string { return "" }, "run-b")
	if a.Seed == b.Seed {
		t.Errorf("run ids run-a and run-b draw with one seed %d", a.Seed)
	}
}

// TestOrderOf: round 1 and a fixed order keep the items; every later round
// is a permutation that the seed, round and key decide, and the rounds do
// not all draw the same one.
func TestOrderOf(t *testing.T) {
	items := []string{"refop", "hydra", "keycloak", "zitadel", "oidc"}
	random := Order{Random: true, Seed: 7}
	if got := random.Of(1, "", items); !slices.Equal(got, items) {
		t.Errorf("round 1: %q, want the given order", got)
	}
	if got := (Order{Seed: 7}).Of(3, "", items); !slices.Equal(got, items) {
		t.Errorf("fixed, round 3: %q, want the given order", got)
	}
	seen := map[string]bool{}
	for round := 2; round <= 6; round++ {
		got := random.Of(round, "", items)
		if sorted := slices.Sorted(slices.Values(got)); !slices.Equal(sorted, slices.Sorted(slices.Values(items))) {
			t.Fatalf("round %d: %q is not a permutation of %q", round, got, items)
		}
		if again := random.Of(round, "", items); !slices.Equal(again, got) {
			t.Errorf("round %d: drawn %q, then %q: want the same draw", round, got, again)
		}
		seen[strings.Join(got, " ")] = true
	}
	if len(seen) < 2 {
		t.Errorf("rounds 2-6 drew one order: %v", seen)
	}
	if slices.Equal(items, []string{"refop", "hydra", "keycloak", "zitadel", "oidc"}) == false {
		t.Errorf("Of changed its argument: %q", items)
	}
	byKey := map[string]bool{}
	for _, key := range []string{"refop", "hydra", "keycloak", "zitadel"} {
		byKey[strings.Join(random.Of(2, key, items), " ")] = true
	}
	if len(byKey) < 2 {
		t.Errorf("four products drew one scenario order in round 2: %v", byKey)
	}
}
