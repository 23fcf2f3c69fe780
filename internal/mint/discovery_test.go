package mint

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestResolveEndpoints: what is given is taken, what is missing is
// discovered once, and a login flow without an authorization_endpoint in
// the document takes its fallback or fails.
func TestResolveEndpoints(t *testing.T) {
	var doc map[string]string
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(srv.Close)
	iss := srv.URL + "/"
	full := map[string]string{"token_endpoint": "http://op/token", "authorization_endpoint": "http://op/auth"}
	tokenOnly := map[string]string{"token_endpoint": "http://op/token"}
	tests := []struct {
		name, flow        string
		tokenURL, authURL string // given
		doc               map[string]string
		want              endpoints
		asks              int64  // discovery requests
		err               string // "" = none
	}{
		{"token given, no login", FlowClientCredentials, "http://given/token", "", full, endpoints{token: "http://given/token"}, 0, ""},
		{"token discovered, no login", FlowPassword, "", "", full, endpoints{token: "http://op/token"}, 1, ""},
		{"both given", FlowAdminAccept, "http://given/token", "http://given/auth", full,
			endpoints{token: "http://given/token", auth: "http://given/auth"}, 0, ""},
		{"auth discovered, token given", FlowFormPage, "http://given/token", "", full,
			endpoints{token: "http://given/token", auth: "http://op/auth"}, 1, ""},
		{"both discovered", FlowSessionAPI, "", "", full, endpoints{token: "http://op/token", auth: "http://op/auth"}, 1, ""},
		{"hydra fallback", FlowAdminAccept, "", "", tokenOnly, endpoints{token: "http://op/token", auth: srv.URL + "/oauth2/auth"}, 1, ""},
		{"zitadel fallback", FlowSessionAPI, "http://given/token", "", tokenOnly,
			endpoints{token: "http://given/token", auth: srv.URL + "/oauth/v2/authorize"}, 1, ""},
		{"refop has no fallback", FlowFormPage, "", "", tokenOnly, endpoints{}, 1, "no authorization_endpoint"},
		{"no token endpoint", FlowPassword, "", "", map[string]string{}, endpoints{}, 1, "no token_endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc = tt.doc
			asked.Store(0)
			cfg := &Config{Flow: tt.flow, Issuer: iss, TokenURL: tt.tokenURL, AuthURL: tt.authURL}
			w := &worker{hc: newHTTPClient(5 * time.Second)}
			ep, err := resolveEndpoints(context.Background(), w, cfg)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want %q", err, tt.err)
				}
			} else if err != nil || ep != tt.want {
				t.Errorf("endpoints %+v (%v), want %+v", ep, err, tt.want)
			}
			if asked.Load() != tt.asks {
				t.Errorf("%d discovery requests, want %d", asked.Load(), tt.asks)
			}
		})
	}
}
