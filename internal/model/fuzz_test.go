package model

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad: aggregate's reader, fed any stream of records (what `aggregate
// -` reads, and what a results file holds), loads it or fails without a
// panic; what it loads, every step, meta (with its facts), cold start and
// sample written back as a stream of records, loads again to the same.
func FuzzLoad(f *testing.F) {
	paths, err := filepath.Glob("testdata/run1/*/*.json*")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed records: %v", err)
	}
	var stream []byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		if len(stream) < 64<<10 {
			stream = append(stream, b...)
		}
	}
	f.Add(stream)
	f.Add([]byte(`{"schema":"idpbench.facts/v1","product":"keycloak","version":"26.7.3","read":"2026-11-30T10:00:00Z",` +
		`"facts":[{"name":"password hashing","value":"argon2 (5 iterations)","source":"read","from":"credential.credential_data"}]}`))
	f.Add([]byte(`{"schema":"other/v1"} {"schema":"idpbench.sample/v1","t":"2026-11-30T10:00:00Z","source":"host","cpu_pct":12.5}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Load(context.Background(), []string{"-"}, bytes.NewReader(in), func(string) {})
		if err != nil {
			return
		}
		var again []byte
		add := func(v any) {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("a loaded record does not encode: %v", err)
			}
			again = append(append(again, b...), '\n')
		}
		for _, s := range got.Steps {
			add(s.Step)
		}
		for _, m := range got.Metas {
			add(m.Meta)
		}
		for _, c := range got.Coldstarts {
			add(c.Coldstart)
		}
		for _, sf := range got.Samples {
			for _, s := range sf.Samples {
				add(s)
			}
		}
		got2, err := Load(context.Background(), []string{"-"}, bytes.NewReader(again), func(string) {})
		if err != nil {
			t.Fatalf("loading what was loaded, written back: %v\n%s", err, again)
		}
		b1, _ := json.Marshal(got)
		b2, _ := json.Marshal(got2)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("records changed on a round trip:\n%s\n%s", b1, b2)
		}
	})
}
