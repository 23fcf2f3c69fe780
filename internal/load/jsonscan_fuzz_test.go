package load

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"unicode/utf8"
)

// firstMember is encoding/json's answer to member: the raw value of the
// first top-level member named key of a valid JSON object (json.Unmarshal
// keeps the last of duplicate keys; member the first).
func firstMember(t *testing.T, body []byte, key string) (json.RawMessage, bool) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %q", body)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if k == key {
			return v, true
		}
	}
	return nil, false
}

// sameJSON reports whether two JSON values decode to the same Go value.
func sameJSON(a, b []byte) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
}

// FuzzMember: on a valid JSON object (valid UTF-8; encoding/json turns bad
// bytes into U+FFFD), member finds a key exactly when encoding/json does,
// and its value is the same bytes; nonEmptyString of a member's value says
// what json.Unmarshal says of it. On any bytes, member returns a value
// that is a piece of the body, never panics or reads past it.
func FuzzMember(f *testing.F) {
	disc, err := os.ReadFile("testdata/refop-discovery.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []struct{ body, key string }{
		{string(disc), "issuer"}, {string(disc), "jwks_uri"}, {string(disc), "missing"},
		{hydraTokenBody, "access_token"}, {keycloakTokenBody, "refresh_token"}, {keycloakTokenBody, "not-before-policy"},
		{refopTokenBody, "access_token"}, {introspectBody, "active"}, {userinfoBody, "sub"},
		{oauthErrorBody, "access_token"}, {`{"redirect_to":"http://127.0.0.1:4444/oauth2/auth?login_verifier=v\u0026state=s"}`, "redirect_to"},
		{`{"callbackUrl":"/login/callback?id=V2_1"}`, "callbackUrl"},
		{`{"a":"}","b":"\\\"","\u0069ssuer":"esc","issuer":"second"}`, "issuer"},
		{`{"active":false, "x": [1, {"active": true}], "y": "\ud83d\ude00"}`, "active"},
		{`{"sub":""}`, "sub"}, {`{"sub":"\u0000"}`, "sub"}, {`{"sub":"\x"}`, "sub"},
	} {
		f.Add([]byte(s.body), s.key)
	}
	f.Fuzz(func(t *testing.T, body []byte, key string) {
		raw, ok := member(body, key)
		if ok && !bytes.Contains(body, raw) || !ok && raw != nil {
			t.Fatalf("member(%q, %q) = %q, %v: not a piece of the body", body, key, raw, ok)
		}
		if ok && len(raw) > 0 && raw[0] == '"' {
			var s string
			want := json.Unmarshal(raw, &s) == nil && s != ""
			if got := nonEmptyString(raw); got != want {
				t.Fatalf("nonEmptyString(%q) = %v, json.Unmarshal says %v (%q)", raw, got, want, s)
			}
		}
		if !json.Valid(body) || !utf8.Valid(body) || !utf8.ValidString(key) {
			return
		}
		if b := bytes.TrimLeft(body, " \t\r\n"); len(b) == 0 || b[0] != '{' {
			if ok {
				t.Fatalf("member(%q, %q) = %q in a JSON value that is not an object", body, key, raw)
			}
			return
		}
		want, wantOK := firstMember(t, body, key)
		if ok != wantOK || ok && !bytes.Equal(raw, want) {
			t.Fatalf("member(%q, %q) = %q, %v; encoding/json: %q, %v", body, key, raw, ok, want, wantOK)
		}
		if ok && !sameJSON(raw, want) {
			t.Fatalf("member(%q, %q) = %q does not decode as encoding/json's %q", body, key, raw, want)
		}
	})
}
