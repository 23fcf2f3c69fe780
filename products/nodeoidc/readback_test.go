package nodeoidc

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// TestServerConfig: readback decodes what the running server answered at
// /config (testdata/config-9.13.3.json, its kid and port replaced), and the
// lifetimes it states are the ones the scenario table gives the pools.
func TestServerConfig(t *testing.T) {
	b, err := os.ReadFile("testdata/config-9.13.3.json")
	if err != nil {
		t.Fatal(err)
	}
	var c serverConfig
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Version != "9.13.3" || c.Client.ID != nodeoidcClient || c.Storage.PoolMax != DBPool || len(c.Storage.Tables) != 15 {
		t.Errorf("decoded %+v", c)
	}
	for model, want := range map[string]int{"AccessToken": ttlAccessToken, "ClientCredentials": ttlClientCredentials, "RefreshToken": ttlRefreshToken} {
		if c.TTL[model] != want {
			t.Errorf("the server's %s TTL is %d s, the table's %d s", model, c.TTL[model], want)
		}
	}
	if got := keysText(c); got != "RSA RS256 (generated per run)" {
		t.Errorf("keysText = %q", got)
	}
	if got := ttlText(map[string]int{"b": 2, "a": 1}); got != "a 1 s, b 2 s" {
		t.Errorf("ttlText = %q", got)
	}
	if !slices.Contains(c.Storage.Tables, "oidc_access_token") || !slices.Contains(c.Features, "introspection") {
		t.Errorf("tables %v, features %v", c.Storage.Tables, c.Features)
	}
}
