package product

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnswer: a scenario the entry declares N/A, or has no row for, is
// ErrNA with the reason; a row answers with its URL, arguments, lifetime,
// the table's metrics and its own pools at STATE/pools/NAME.pool; an entry
// without answers, a state up has not written, and a row naming a pool the
// table lacks are errors.
func TestAnswer(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "state.env"), []byte("ISSUER=http://127.0.0.1:9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	table := func(st *State) Table {
		return Table{Metrics: []string{"--server-metrics", st.Get("ISSUER") + "/metrics"},
			Scenarios: map[string]Scenario{
				"introspect": {Endpoint: st.Get("ISSUER") + "/introspect", Load: Reuse, TTL: 60, Before: []string{"assertions"}},
				"userinfo":   {Endpoint: st.Get("ISSUER") + "/userinfo", Before: []string{"nosuch"}},
			},
			Pools: map[string]Pool{"assertions": {Args: []string{"--flow", "client-assertion"}, MaxAgeS: 1800}}}
	}
	p := Product{Name: "p", NA: map[string]string{"jwt_bearer": "no RFC 7523 grant"}, Answers: &Answers{Table: table}}
	if _, err := p.Answer(t.TempDir(), "introspect"); err == nil || !strings.Contains(err.Error(), "no state in") {
		t.Errorf("before up: %v", err)
	}
	a, err := p.Answer(dir, "introspect")
	if err != nil || a.Endpoint != "http://127.0.0.1:9/introspect" || a.TTL != 60 || len(a.Load) != 2 || a.Metrics[1] != "http://127.0.0.1:9/metrics" ||
		len(a.Before) != 1 || a.Before[0].Path != filepath.Join(dir, "pools", "assertions.pool") || a.Before[0].MaxAgeS != 1800 {
		t.Errorf("introspect: %+v, %v", a, err)
	}
	for s, want := range map[string]string{"jwt_bearer": "p jwt_bearer: N/A: no RFC 7523 grant", "refresh": "p refresh: N/A: no row in its scenario table"} {
		if _, err := p.Answer(dir, s); !errors.Is(err, ErrNA) || err.Error() != want {
			t.Errorf("%s: %v; want ErrNA %q", s, err, want)
		}
	}
	if _, err := p.Answer(dir, "userinfo"); err == nil || errors.Is(err, ErrNA) || !strings.Contains(err.Error(), `names no pool "nosuch"`) {
		t.Errorf("a row naming no pool: %v", err)
	}
	if _, err := (Product{Name: "bare"}).Answer(dir, "introspect"); err == nil || !strings.Contains(err.Error(), "has no answers") {
		t.Errorf("an entry without answers: %v", err)
	}
}
