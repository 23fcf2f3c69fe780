package schema

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func phaseLine(t *testing.T, p Phase) string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDecodePhases(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	good := NewPhase("s1", "hydra", PhaseKindLadder, "hydra ladder discovery", t0, t0.Add(90500*time.Millisecond))
	if good.Seconds != 90.5 {
		t.Fatalf("NewPhase seconds %g, want 90.5", good.Seconds)
	}
	bad := func(f func(*Phase)) string {
		p := good
		f(&p)
		return phaseLine(t, p)
	}
	tests := []struct {
		name, text string
		n          int    // records decoded
		err        string // "" = no error
	}{
		{"two lines and a blank one", phaseLine(t, good) + "\n\n" + phaseLine(t, good) + "\n", 2, ""},
		{"run-wide phase", bad(func(p *Phase) { p.Product, p.Kind = "", PhaseKindBuild }), 1, ""},
		{"empty file", "", 0, ""},
		{"truncated line", phaseLine(t, good) + "\n" + `{"schema":"idpbench.phase/v1","ses` + "\n", 0, "p.jsonl: line 2: unexpected EOF"},
		{"two records on a line", phaseLine(t, good) + " {}\n", 0, `p.jsonl: line 1: "{}" after the record`},
		{"unknown kind", bad(func(p *Phase) { p.Kind = "lunch" }), 0, `p.jsonl: line 1: not a valid phase record: kind "lunch" is not one of build,`},
		{"end before start", bad(func(p *Phase) { p.End = t0.Add(-time.Second) }), 0, "line 1: not a valid phase record: end 2026-11-30T08:59:59Z before start"},
		{"seconds disagree", bad(func(p *Phase) { p.Seconds = 12 }), 0, "seconds 12 != end - start (90.5)"},
		{"no session, no name", bad(func(p *Phase) { p.Session, p.Name = "", " " }), 0, "no session; no name"},
		{"another major version", bad(func(p *Phase) { p.Schema = "idpbench.phase/v2" }), 0, `line 1: schema "idpbench.phase/v2" is not supported`},
		{"a step record", `{"schema":"idpbench.step/v1"}`, 0, "is not a idpbench.phase record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodePhases(strings.NewReader(tt.text), "p.jsonl")
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("error %v, want it to contain %q", err, tt.err)
			case len(got) != tt.n:
				t.Fatalf("decoded %d records, want %d", len(got), tt.n)
			}
		})
	}
}
