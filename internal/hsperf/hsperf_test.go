package hsperf

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRoundTrip(t *testing.T) {
	in := Counters{"java.ci.totalTime": 71398691033, "sun.os.hrt.frequency": 1_000_000_000, "sun.ci.standardCompiles": 9607}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		got, err := Parse(Encode(in, order))
		if err != nil {
			t.Fatalf("%v: %v", order, err)
		}
		if len(got) != len(in) {
			t.Errorf("%v: %d counters, want %d: %v", order, len(got), len(in), got)
		}
		for k, v := range in {
			if got[k] != v {
				t.Errorf("%v: %s = %d, want %d", order, k, got[k], v)
			}
		}
		s, err := got.CompileSeconds()
		if err != nil || s < 71.398 || s > 71.399 {
			t.Errorf("%v: CompileSeconds %v, %v; want 71.3987 s", order, s, err)
		}
	}
}

// TestParseRefusesDamage: what is not an hsperfdata file, or a truncated
// one, is an error saying what is wrong, never a panic or a wrong counter.
func TestParseRefusesDamage(t *testing.T) {
	good := Encode(Counters{"java.ci.totalTime": 5, "sun.os.hrt.frequency": 10}, binary.LittleEndian)
	wrongMagic := append([]byte(nil), good...)
	wrongMagic[0] = 0
	version1 := append([]byte(nil), good...)
	version1[5] = 1
	tests := map[string]struct {
		b    []byte
		want string
	}{
		"empty":          {nil, "shorter than"},
		"wrong magic":    {wrongMagic, "magic"},
		"version 1":      {version1, "version"},
		"truncated":      {good[:len(good)-10], "do not fit"},
		"entries beyond": {good[:prologueSize+4], "outside"},
	}
	for name, tt := range tests {
		if _, err := Parse(tt.b); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, tt.want)
		}
	}
	if _, err := (Counters{"sun.os.hrt.frequency": 1}).CompileSeconds(); err == nil {
		t.Error("CompileSeconds without java.ci.totalTime: no error")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(Encode(Counters{"java.ci.totalTime": 5, "sun.os.hrt.frequency": 10}, binary.LittleEndian))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Parse(b) // must not panic
	})
}

func TestFind(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "hsperfdata_bench")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "4242"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := Find(tmp, []int{17, 4242}); err != nil || p != filepath.Join(dir, "4242") {
		t.Errorf("Find: %q, %v", p, err)
	}
	if _, err := Find(tmp, []int{17}); err != ErrNoJVM {
		t.Errorf("Find without a JVM: %v, want ErrNoJVM", err)
	}
}
