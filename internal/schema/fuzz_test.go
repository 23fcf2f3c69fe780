package schema

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// addRecordFiles seeds f with the committed records matching the globs:
// real steps, metas and cold starts of the reference run and the report's
// fixtures.
func addRecordFiles(f *testing.F, globs ...string) {
	f.Helper()
	n := 0
	for _, g := range globs {
		paths, err := filepath.Glob(g)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
			n++
		}
	}
	if n == 0 {
		f.Fatalf("no seed records match %v", globs)
	}
}

// reencode encodes v as JSON, which a decoded record must always allow.
func reencode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("a decoded record does not encode: %v", err)
	}
	return b
}

// fixedPoint checks that a decoded record v is a fixed point from its first
// encoding on: the bytes decode (again and a third time) to records that
// encode to the same bytes and are equal. The first decode is not compared
// field by field: "labels": {} or "pools": [] decode to empty values that
// omitempty drops and that decode again as nil, the same record. utc
// normalises the record's times, which compare by instant ("+00:00" may
// decode into Local, "Z" into UTC).
func fixedPoint[T any](t *testing.T, what string, v *T, decode func(io.Reader, string) (*T, error), utc func(*T)) {
	t.Helper()
	b := reencode(t, v)
	v2, err := decode(bytes.NewReader(b), "again.json")
	if err != nil {
		t.Fatalf("the re-encoded %s does not decode: %v\n%s", what, err, b)
	}
	b2 := reencode(t, v2)
	if !bytes.Equal(b, b2) {
		t.Fatalf("the %s's encoding changes on a second round:\n%s\n%s", what, b, b2)
	}
	v3, err := decode(bytes.NewReader(b2), "third.json")
	if err != nil {
		t.Fatalf("the re-encoded %s does not decode: %v\n%s", what, err, b2)
	}
	utc(v2)
	utc(v3)
	if !reflect.DeepEqual(v2, v3) {
		t.Fatalf("the %s changed on a round trip:\n%+v\n%+v", what, v2, v3)
	}
}

// FuzzDecodeStep: a step that decodes is valid, and encoding it gives a
// record that decodes to the same step and encodes to the same bytes.
func FuzzDecodeStep(f *testing.F) {
	addRecordFiles(f, "testdata/step-v1.json", "testdata/step-v1-segment.json", "../../results/reference/*/*-c*.json", "../model/testdata/*/*/*-c*.json")
	f.Add([]byte(`{"schema":"idpbench.step/v1.2","scenario":"discovery","status":"error","connections":1,"error":"dial tcp: refused"}`))
	f.Add([]byte(`{"schema":"idpbench.step/v1","scenario":"refresh","status":"complete","connections":2,` +
		`"start":"2026-11-30T10:00:00.123456789+01:00","end":"2026-11-30T10:00:10Z","requests":3,"ok":1,"errors":{"non2xx":1,"check":1}}`))
	f.Add([]byte(`{"schema":"idpbench.step/v1","scenario":"discovery","status":"complete","connections":2,"warmup_s":7,` +
		`"warmup_rule":{"min_s":5,"max_s":60,"stable_intervals":3,"tolerance_pct":5},"warmup_stable":true,"warmup_qps":[10.5,80,99,100,101,100],` +
		`"start":"2026-11-30T10:00:07Z","end":"2026-11-30T10:00:17Z","requests":1,"ok":1}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := DecodeStep(bytes.NewReader(in), "in.json")
		if err != nil {
			return
		}
		fixedPoint(t, "step", s, DecodeStep, func(s *Step) {
			s.Start, s.End = s.Start.UTC(), s.End.UTC()
			for _, p := range []*time.Time{s.StartAt, s.StartedAt} {
				if p != nil {
					*p = p.UTC()
				}
			}
		})
	})
}

// FuzzDecodeMeta: a run meta (with the facts read back from a product)
// that decodes encodes to a record that decodes to the same meta; a
// cold start record likewise.
func FuzzDecodeMeta(f *testing.F) {
	addRecordFiles(f, "../../results/reference/*/meta.json", "../../results/reference/*/coldstart-*.json",
		"../model/testdata/*/*/meta.json", "../model/testdata/*/*/coldstart-*.json")
	f.Add([]byte(`{"schema":"idpbench.meta/v1","product":"zitadel","status":"na","na_reason":"ZITADEL_BIN is not set and no Docker engine"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		if m, err := DecodeMeta(bytes.NewReader(in), "meta.json"); err == nil {
			fixedPoint(t, "meta", m, DecodeMeta, func(m *Meta) { m.Start, m.End = m.Start.UTC(), m.End.UTC() })
		}
		if c, err := DecodeColdstart(bytes.NewReader(in), "coldstart.json"); err == nil {
			b := reencode(t, c)
			c2, err := DecodeColdstart(bytes.NewReader(b), "again.json")
			if err != nil {
				t.Fatalf("the re-encoded cold start does not decode: %v\n%s", err, b)
			}
			c.Start, c2.Start = c.Start.UTC(), c2.Start.UTC()
			if !reflect.DeepEqual(c, c2) || !bytes.Equal(b, reencode(t, c2)) {
				t.Fatalf("the cold start changed on a round trip:\n%+v\n%+v", c, c2)
			}
		}
	})
}

// FuzzHistogram: a histogram of any latencies (ns, within the shared
// geometry) encodes to a string that decodes to an equal histogram: the
// same count at every value, the same total, min and max.
func FuzzHistogram(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1})
	f.Add(bytes.Repeat([]byte{0x00, 0x4c, 0x4b, 0x40, 0x00, 0x00, 0x00, 0x64}, 10)) // 5 ms x 100
	f.Add([]byte{0x0d, 0xf8, 0x47, 0x5e, 0xff, 0xff, 0xff, 0xff})                   // 60 s-ish, max count
	f.Fuzz(func(t *testing.T, in []byte) {
		h := NewHistogram()
		for ; len(in) >= 8; in = in[8:] {
			v := int64(binary.BigEndian.Uint32(in)) * 15 % int64(HistHighestNS) // up to 60 s
			if err := h.RecordValues(v, int64(binary.BigEndian.Uint32(in[4:])%1e6)); err != nil {
				t.Fatalf("recording %d: %v", v, err)
			}
		}
		enc, err := EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeHistogram(enc)
		if err != nil {
			t.Fatalf("decoding what was encoded: %v", err)
		}
		if !got.Equals(h) || got.TotalCount() != h.TotalCount() || got.Min() != h.Min() || got.Max() != h.Max() {
			t.Fatalf("decoded %d values [%d, %d], encoded %d [%d, %d]",
				got.TotalCount(), got.Min(), got.Max(), h.TotalCount(), h.Min(), h.Max())
		}
		if Summarize(got) != Summarize(h) {
			t.Fatalf("summaries differ: %+v, %+v", Summarize(got), Summarize(h))
		}
	})
}

// FuzzDecodeHistogram: any histogram field (what a record file holds)
// decodes or fails without a panic, and one that decodes has idpbench's
// geometry and encodes back to a field that decodes to an equal histogram.
func FuzzDecodeHistogram(f *testing.F) {
	b, err := os.ReadFile("testdata/step-v1.json")
	if err != nil {
		f.Fatal(err)
	}
	var s Step
	if err := json.Unmarshal(b, &s); err != nil {
		f.Fatal(err)
	}
	f.Add(s.Histogram)
	for _, iv := range s.Intervals {
		f.Add(iv.Histogram)
	}
	h := NewHistogram()
	empty, _ := EncodeHistogram(h)
	f.Add(empty)
	f.Add(strings.TrimSuffix(s.Histogram, "=")[:len(s.Histogram)/2])
	f.Add("HISTFAAAAA==")
	f.Fuzz(func(t *testing.T, field string) {
		h, err := DecodeHistogram(field)
		if err != nil {
			return
		}
		if !SameGeometry(h, NewHistogram()) {
			t.Fatalf("decoded a histogram of another geometry")
		}
		enc, err := EncodeHistogram(h)
		if err != nil {
			t.Fatalf("a decoded histogram does not encode: %v", err)
		}
		h2, err := DecodeHistogram(enc)
		if err != nil || !h2.Equals(h) || h2.TotalCount() != h.TotalCount() {
			t.Fatalf("re-encoded histogram: %v, %d values, want %d", err, h2.TotalCount(), h.TotalCount())
		}
	})
}
