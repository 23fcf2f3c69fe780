// Package adaptertest answers as a product's registry entry would for the
// fake adapter (internal/adapter/testdata/fakeadapter), from the same files
// in its state directory, and serves the fake product's discovery endpoint
// (Serve), for the tests of internal/ladder and internal/gcjitter.
package adaptertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
// The endpoint is BASE/SCENARIO, BASE the text of STATE/base (Serve writes
// it) or else http://127.0.0.1:9; the arguments start with --client-id
// bench; the adapter's fresh runs before every window.
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
	base, ok := read("base")
	if !ok {
		base = "http://127.0.0.1:9"
	}
	a := product.Answer{Endpoint: base + "/" + scenario, Load: []string{"--client-id", "bench"}, Fresh: true}
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

// Serve serves the fake product's discovery endpoint for the state
// directory state until the test ends, and writes its base URL to
// STATE/base: each request is appended to STATE/calls as "health"; it
// answers 502 while STATE/unhealthy exists, else 200.
func Serve(t testing.TB, state string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f, err := os.OpenFile(filepath.Join(state, "calls"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, "health")
			f.Close()
		}
		if _, err := os.Stat(filepath.Join(state, "unhealthy")); err == nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.Write([]byte(`{"issuer":"fake"}`))
	}))
	t.Cleanup(srv.Close)
	if err := os.WriteFile(filepath.Join(state, "base"), []byte(srv.URL+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
