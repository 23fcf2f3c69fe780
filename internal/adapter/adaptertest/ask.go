// Package adaptertest answers as a product's registry entry would for the
// fake adapter (internal/adapter/testdata/fakeadapter), from the same files
// in its state directory, for the tests of internal/ladder and
// internal/gcjitter.
package adaptertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/product"
)

// Ask is a product.Asker that appends "answer SCENARIO" to STATE/calls and
// answers from files in the state directory STATE:
//
//	na-SCENARIO        N/A, the file's text the reason
//	poolmode-SCENARIO  the arguments get --pool-mode and the file's text
//	metrics            the metrics arguments: the file's lines
//	ttl-SCENARIO       the pool's lifetime: the file's number
//	fail-answer        an error
//
// The endpoint is http://127.0.0.1:9/SCENARIO, the arguments start with
// --client-id bench.
func Ask(state, scenario string) (product.Answer, error) {
	calls, err := os.OpenFile(filepath.Join(state, "calls"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return product.Answer{}, err
	}
	fmt.Fprintf(calls, "answer %s\n", scenario)
	if err := calls.Close(); err != nil {
		return product.Answer{}, err
	}
	read := func(name string) (string, bool) {
		b, err := os.ReadFile(filepath.Join(state, name))
		return strings.TrimRight(string(b), "\n"), err == nil
	}
	if _, ok := read("fail-answer"); ok {
		return product.Answer{}, fmt.Errorf("fake: %s: no answer", scenario)
	}
	if why, ok := read("na-" + scenario); ok {
		return product.Answer{}, fmt.Errorf("fake %s: %w: %s", scenario, product.ErrNA, why)
	}
	a := product.Answer{Endpoint: "http://127.0.0.1:9/" + scenario, Load: []string{"--client-id", "bench"}}
	if mode, ok := read("poolmode-" + scenario); ok {
		a.Load = append(a.Load, "--pool-mode", mode)
	}
	if m, ok := read("metrics"); ok && m != "" {
		a.Metrics = strings.Split(m, "\n")
	}
	if s, ok := read("ttl-" + scenario); ok {
		if a.TTL, err = strconv.Atoi(s); err != nil {
			return product.Answer{}, fmt.Errorf("fake: ttl-%s: %w", scenario, err)
		}
	}
	return a, nil
}
