package sessionapi

import "testing"

// TestNewFlow: a URL that does not parse is refused.
func TestNewFlow(t *testing.T) {
	for _, c := range []FlowConfig{{AuthURL: "http://[::1", APIURL: "http://localhost:8080", RedirectURI: "http://localhost:9999/cb"},
		{AuthURL: "http://localhost:8080" + AuthorizePath, APIURL: "http://[::1", RedirectURI: "http://localhost:9999/cb"},
		{AuthURL: "http://localhost:8080" + AuthorizePath, APIURL: "http://localhost:8080", RedirectURI: "http://[::1"}} {
		if _, err := NewFlow(c); err == nil {
			t.Errorf("NewFlow(%+v) accepted a URL that does not parse", c)
		}
	}
}
