package load

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func TestMember(t *testing.T) {
	tests := []struct {
		body, key, want string
		ok              bool
	}{
		{`{"issuer":"x"}`, "issuer", `"x"`, true},
		{` { "a" : [1,{"issuer":"no"}], "issuer" : "yes" } `, "issuer", `"yes"`, true},
		{`{"a":{"issuer":"nested"}}`, "issuer", "", false},
		{`{"note":"\"issuer\":\"x\""}`, "issuer", "", false},
		{`{"active":true,"x":null}`, "active", "true", true},
		{`{"active":false}`, "active", "false", true},
		{`{"\u0069ssuer":"esc"}`, "issuer", `"esc"`, true},
		{`{"issuer":"a","issuer":"b"}`, "issuer", `"a"`, true}, // the first wins
		{`{"a":1,"issuer":"x","b":[}`, "issuer", `"x"`, true},  // what follows is not validated
		{`{"a":[1,{"issuer":"no"}],"b":"issuer"}`, "issuer", "", false},
		{`{"a":"x"}`, "issuer", "", false},
		{`{"issuer"}`, "issuer", "", false},
		{`{"issuer":1`, "issuer", "", false},   // truncated
		{`{"issuer":"x}`, "issuer", "", false}, // unterminated string
		{"\n{\"issuer\" : \"x\"}\r\n", "issuer", `"x"`, true},
		{`{"a":"}","issuer":"x"}`, "issuer", `"x"`, true},
		{`{"a":"\\","issuer":1.5e3}`, "issuer", `1.5e3`, true},
		{`{"issuer":"x"`, "issuer", "", false},
		{`{"issuer":"x"} trailing`, "issuer", "", false},
		{`{"issuer" "x"}`, "issuer", "", false},
		{`{"issuer":}`, "issuer", "", false},
		{`["issuer"]`, "issuer", "", false},
		{`{}`, "issuer", "", false},
		{``, "issuer", "", false},
		{`{"a":[1,2}`, "issuer", "", false},
	}
	for _, tt := range tests {
		got, ok := member([]byte(tt.body), tt.key)
		if ok != tt.ok || string(got) != tt.want {
			t.Errorf("member(%s, %q) = %s, %v; want %s, %v", tt.body, tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

func TestChecks(t *testing.T) {
	tests := []struct {
		name        string
		check       func([]byte) (bool, string)
		body        string
		ok          bool
		wantRotated string
	}{
		{"active true", checkActive, `{"active":true}`, true, ""},
		{"active string", checkActive, `{"active":"true"}`, false, ""},
		{"active nested", checkActive, `{"x":{"active":true}}`, false, ""},
		{"active false", checkActive, `{"active":false,"exp":1}`, false, ""},
		{"answered false", checkAnswered, `{"active":false,"exp":1}`, true, ""},
		{"answered true", checkAnswered, `{"active":true}`, true, ""},
		{"answered string", checkAnswered, `{"active":"false"}`, false, ""},
		{"answered missing", checkAnswered, `{"error":"invalid_client"}`, false, ""},
		{"issuer empty", checkString("issuer"), `{"issuer":""}`, false, ""},
		{"issuer number", checkString("issuer"), `{"issuer":1}`, false, ""},
		{"refresh rotated", checkRefresh, `{"access_token":"a","refresh_token":"r2"}`, true, "r2"},
		{"refresh not rotated", checkRefresh, `{"access_token":"a"}`, true, ""},
		{"refresh no access token", checkRefresh, `{"refresh_token":"r2"}`, false, ""},
	}
	for _, tt := range tests {
		ok, rotated := tt.check([]byte(tt.body))
		if ok != tt.ok || rotated != tt.wantRotated {
			t.Errorf("%s: got %v %q, want %v %q", tt.name, ok, rotated, tt.ok, tt.wantRotated)
		}
	}
}

// BenchmarkCheckRefopDiscovery checks a reference OP discovery document
// (testdata/refop-discovery.json, 1951 bytes).
func BenchmarkCheckRefopDiscovery(b *testing.B) {
	body, err := os.ReadFile("testdata/refop-discovery.json")
	if err != nil {
		b.Fatal(err)
	}
	check := checkString("issuer")
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := check(body); !ok {
			b.Fatal("check failed")
		}
	}
}

func BenchmarkCheckDiscovery(b *testing.B) {
	doc := map[string]any{"issuer": "http://localhost:9998/"}
	for i := range 30 {
		doc[fmt.Sprintf("endpoint_or_list_%d", i)] = []string{"http://localhost:9998/x", "RS256", "client_secret_basic"}
	}
	body, _ := json.Marshal(doc)
	check := checkString("issuer")
	for b.Loop() {
		if ok, _ := check(body); !ok {
			b.Fatal("check failed")
		}
	}
}
