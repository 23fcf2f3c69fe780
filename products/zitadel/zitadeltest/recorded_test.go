package zitadeltest

import (
	"os"
	"strings"
	"testing"
)

func TestShapeDiff(t *testing.T) {
	rec := `{"name":"x","n":1,"ok":true,"type":"KEY_TYPE_JSON","list":["A_B","C_D"],"obj":{"id":"1"},"ids":["1"]}`
	tests := []struct {
		actual string
		want   []string // substrings, one per expected difference; none = equal shape
	}{
		{`{"name":"other","n":7,"ok":false,"type":"KEY_TYPE_JSON","list":["A_B","C_D"],"obj":{"id":"2"},"ids":["2","3"]}`, nil},
		{`{"name":"x","n":1,"ok":true,"type":"KEY_TYPE_JSON","list":["A_B","C_D"],"obj":{"id":"1"}}`, []string{"body.ids: missing"}},
		{`{"name":"x","n":1,"ok":true,"type":"KEY_TYPE_JSON","list":["A_B","C_D"],"obj":{"id":"1"},"ids":[],"extra":1}`, []string{"body.extra: not in the recorded call"}},
		{`{"name":"x","n":"1","ok":true,"type":"KEY_TYPE_JSON","list":["A_B","C_D"],"obj":{"id":"1"},"ids":[]}`, []string{"body.n: string, want float64"}},
		{`{"name":"x","n":1,"ok":true,"type":"KEY_TYPE_UNSPECIFIED","list":["C_D","A_B"],"obj":{"id":1},"ids":[]}`, []string{"body.list", "body.obj.id", "body.type"}},
		{`[1]`, []string{"want an object"}},
		{`not json`, []string{"not JSON"}},
	}
	for _, tt := range tests {
		diffs := ShapeDiff([]byte(rec), []byte(tt.actual))
		if len(diffs) != len(tt.want) {
			t.Errorf("%s: diffs %q, want %d", tt.actual, diffs, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(diffs[i], w) {
				t.Errorf("%s: diff %q lacks %q", tt.actual, diffs[i], w)
			}
		}
	}
}

// TestRecordsDocumented: every record loads, names its documentation and
// source, and is listed in the README.
func TestRecordsDocumented(t *testing.T) {
	readme, err := os.ReadFile("testdata/README.md")
	if err != nil {
		t.Fatal(err)
	}
	names := Names()
	if len(names) < 20 {
		t.Fatalf("%d records", len(names))
	}
	for _, n := range append(names, "errors") {
		if n != "errors" {
			r := MustLoad(t, n)
			if !strings.HasPrefix(r.Doc, "https://") || !strings.Contains(r.Source, "/") {
				t.Errorf("%s: doc %q, source %q", n, r.Doc, r.Source)
			}
		}
		if !strings.Contains(string(readme), n+".json") {
			t.Errorf("README.md does not list %s.json", n)
		}
	}
	if len(Errors(t)) != 4 {
		t.Errorf("errors.json: want the 401, 403, 409 and 500 cases")
	}
}
