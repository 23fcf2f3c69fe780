// Package zitadeltest serves Zitadel's API from request and response shapes
// written by hand (testdata/*.json, each naming the documentation and proto
// it was taken from; none is a recording of a real server) and checked
// against Zitadel's definitions (@zitadel/proto, see zitadeldefs): Replay
// answers one written call and checks the request field by field; Fake is a
// stateful stand-in for Zitadel that serves every call idpbench makes,
// checks each request against its written shape and, when
// $IDPBENCH_ZITADEL_PROTO is set, against the definitions, and answers in
// the written response shape.
package zitadeltest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
)

//go:embed testdata/*.json
var recorded embed.FS

// Record is one recorded call.
type Record struct {
	Call    string `json:"call"`
	Doc     string `json:"doc"`
	Source  string `json:"source"`
	Request struct {
		Method  string            `json:"method"`
		Path    string            `json:"path"`
		Query   map[string]string `json:"query"`
		Headers map[string]string `json:"headers"`
		Body    json.RawMessage   `json:"body"`
		Form    map[string]string `json:"form"`
	} `json:"request"`
	Response struct {
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
		Body    json.RawMessage   `json:"body"`
	} `json:"response"`
}

// ErrorCase is a recorded error answer.
type ErrorCase struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// Load reads testdata/<name>.json.
func Load(name string) (*Record, error) {
	b, err := recorded.ReadFile("testdata/" + name + ".json")
	if err != nil {
		return nil, err
	}
	r := new(Record)
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("testdata/%s.json: %w", name, err)
	}
	if r.Doc == "" || r.Source == "" || r.Request.Method == "" || r.Response.Status == 0 {
		return nil, fmt.Errorf("testdata/%s.json: lacks doc, source, request.method or response.status", name)
	}
	return r, nil
}

// MustLoad is Load for tests.
func MustLoad(t testing.TB, name string) *Record {
	t.Helper()
	r, err := Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Errors returns the recorded error answers (401, 403, 409, 500).
func Errors(t testing.TB) []ErrorCase {
	t.Helper()
	b, err := recorded.ReadFile("testdata/errors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []ErrorCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

// Names lists the recorded calls (file names without .json), errors excluded.
func Names() []string {
	ents, _ := recorded.ReadDir("testdata")
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok && n != "errors" {
			out = append(out, n)
		}
	}
	return out
}

// checkedHeaders are the headers whose presence must match the record:
// recorded ones must be sent with the recorded value, the others must not be
// sent at all (no token where the call takes none, no org where the call is
// instance-wide).
var checkedHeaders = []string{"Authorization", "X-Zitadel-Orgid", "X-Zitadel-Login-Client", "Content-Type"}

// placeholder matches {{NAME}} in recorded values.
var placeholder = regexp.MustCompile(`\{\{[A-Z_]+\}\}`)

// CheckHeaders compares the checked headers of r with the record; vars give
// the values of {{NAME}} placeholders.
func (rec *Record) CheckHeaders(r *http.Request, vars map[string]string) []string {
	var diffs []string
	for _, h := range checkedHeaders {
		want, recordedHas := rec.Request.Headers[h]
		got := r.Header.Get(h)
		switch {
		case !recordedHas && got != "":
			diffs = append(diffs, fmt.Sprintf("header %s sent, the recorded call has none", h))
		case recordedHas && got != Expand(want, vars):
			diffs = append(diffs, fmt.Sprintf("header %s = %q, want %q", h, redactBearer(got), Expand(want, vars)))
		}
	}
	return diffs
}

func redactBearer(v string) string {
	if k, _, ok := strings.Cut(v, " "); ok && (k == "Bearer" || k == "Basic") {
		return k + " <" + fmt.Sprint(len(v)-len(k)-1) + " chars>"
	}
	return v
}

// Expand replaces {{NAME}} placeholders from vars; unknown ones stay.
func Expand(s string, vars map[string]string) string {
	return placeholder.ReplaceAllStringFunc(s, func(p string) string {
		if v, ok := vars[strings.Trim(p, "{}")]; ok {
			return v
		}
		return p
	})
}

// ShapeDiff reports how the JSON actual differs in shape from the JSON
// recorded: the same keys at every level, the same kinds of values, and
// equal values for enum-like strings (UPPER_CASE names). Extra or missing
// fields are differences.
func ShapeDiff(recordedJSON, actual []byte) []string {
	var rv, av any
	if err := json.Unmarshal(recordedJSON, &rv); err != nil {
		return []string{"recorded body: " + err.Error()}
	}
	if err := json.Unmarshal(actual, &av); err != nil {
		return []string{"body is not JSON: " + err.Error()}
	}
	var diffs []string
	shape("body", rv, av, &diffs)
	return diffs
}

var enumLike = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)

func shape(path string, r, a any, diffs *[]string) {
	switch rv := r.(type) {
	case map[string]any:
		av, ok := a.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: %T, want an object", path, a))
			return
		}
		for _, k := range keys(rv) {
			if _, ok := av[k]; !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: missing", path, k))
				continue
			}
			shape(path+"."+k, rv[k], av[k], diffs)
		}
		for _, k := range keys(av) {
			if _, ok := rv[k]; !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: not in the recorded call", path, k))
			}
		}
	case []any:
		av, ok := a.([]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: %T, want an array", path, a))
			return
		}
		if len(rv) > 0 && allEnums(rv) {
			if !reflect.DeepEqual(rv, av) {
				*diffs = append(*diffs, fmt.Sprintf("%s: %v, want %v", path, av, rv))
			}
			return
		}
		for i, e := range av {
			if len(rv) > 0 {
				shape(fmt.Sprintf("%s[%d]", path, i), rv[0], e, diffs)
			}
		}
	case string:
		as, ok := a.(string)
		switch {
		case !ok:
			*diffs = append(*diffs, fmt.Sprintf("%s: %T, want a string", path, a))
		case enumLike.MatchString(rv) && as != rv:
			*diffs = append(*diffs, fmt.Sprintf("%s: %q, want %q", path, as, rv))
		}
	default:
		if reflect.TypeOf(r) != reflect.TypeOf(a) {
			*diffs = append(*diffs, fmt.Sprintf("%s: %T, want %T", path, a, r))
		}
	}
}

func allEnums(v []any) bool {
	for _, e := range v {
		if s, ok := e.(string); !ok || !enumLike.MatchString(s) {
			return false
		}
	}
	return true
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Replay serves one recorded call. Each request is checked against the
// record — method, path, query, the checked headers, the JSON body equal to
// the recorded one (or the form) — and answered with the recorded status,
// headers and body (placeholders expanded from vars). A mismatch fails t
// and is answered 400. Hits counts the requests served.
type Replay struct {
	*httptest.Server
	Hits atomic.Int64
}

// NewReplay starts a replay of rec; vars fill the {{NAME}} placeholders.
func NewReplay(t testing.TB, rec *Record, vars map[string]string) *Replay {
	rp := &Replay{}
	rp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rp.Hits.Add(1)
		if diffs := rec.Diff(r, vars); len(diffs) > 0 {
			t.Errorf("%s: request differs from the recorded one:\n  %s", rec.Call, strings.Join(diffs, "\n  "))
			http.Error(w, `{"code":3,"message":"request differs from the recorded call"}`, http.StatusBadRequest)
			return
		}
		for k, v := range rec.Response.Headers {
			w.Header().Set(k, Expand(v, vars))
		}
		if len(rec.Response.Body) > 0 {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(rec.Response.Status)
		w.Write([]byte(Expand(string(rec.Response.Body), vars)))
	}))
	t.Cleanup(rp.Close)
	return rp
}

// Diff lists the differences between r and the recorded request.
func (rec *Record) Diff(r *http.Request, vars map[string]string) []string {
	var diffs []string
	if r.Method != rec.Request.Method || r.URL.Path != rec.Request.Path {
		diffs = append(diffs, fmt.Sprintf("%s %s, want %s %s", r.Method, r.URL.Path, rec.Request.Method, rec.Request.Path))
	}
	diffs = append(diffs, rec.CheckHeaders(r, vars)...)
	diffs = append(diffs, valuesDiff("query", r.URL.Query(), rec.Request.Query, vars)...)
	body, _ := readBody(r)
	switch {
	case rec.Request.Form != nil:
		form, _ := url.ParseQuery(string(body))
		diffs = append(diffs, valuesDiff("form", form, rec.Request.Form, vars)...)
	case len(rec.Request.Body) > 0:
		if !jsonEqual(rec.Request.Body, body) {
			diffs = append(diffs, fmt.Sprintf("body %s, want %s", body, compact(rec.Request.Body)))
		}
	case len(body) > 0:
		diffs = append(diffs, "a body was sent, the recorded call has none")
	}
	return diffs
}

func valuesDiff(what string, got url.Values, want map[string]string, vars map[string]string) []string {
	var diffs []string
	for k, v := range want {
		if got.Get(k) != Expand(v, vars) {
			diffs = append(diffs, fmt.Sprintf("%s %s = %q, want %q", what, k, got.Get(k), Expand(v, vars)))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s %s not in the recorded call", what, k))
		}
	}
	sort.Strings(diffs)
	return diffs
}

func readBody(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r.Body)
	return b.Bytes(), err
}

func jsonEqual(a, b []byte) bool {
	var av, bv any
	return json.Unmarshal(a, &av) == nil && json.Unmarshal(b, &bv) == nil && reflect.DeepEqual(av, bv)
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}
