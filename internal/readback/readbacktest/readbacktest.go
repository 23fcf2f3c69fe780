// Package readbacktest helps the tests of a product's readback
// (products/NAME/readback_test.go): a server of one fixed body, URLs, and
// the check that facts were read with their values and sources.
package readbacktest

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

// Serve starts a server that answers path with body, anything else 404.
func Serve(t *testing.T, path, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != path {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// URL parses s or fails the test.
func URL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// CheckFacts wants each named fact read with that value and a source.
func CheckFacts(t *testing.T, facts []schema.Fact, want map[string]string) {
	t.Helper()
	got := map[string]schema.Fact{}
	for _, f := range facts {
		got[f.Name] = f
	}
	for name, v := range want {
		f, ok := got[name]
		if !ok || f.Value != v || f.Source != schema.FactRead || f.From == "" {
			t.Errorf("fact %q = %+v, want %q, read, with its source", name, f, v)
		}
	}
}
