package formlogin

import (
	"net/url"
	"slices"
	"testing"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestParseForm(t *testing.T) {
	base := mustURL(t, "http://op.example/realms/bench/protocol/openid-connect/auth?client_id=x")
	tests := []struct {
		name, page string
		action     string // "" = no form found
		hidden     [][2]string
	}{
		{"keycloak absolute action with &amp;",
			`<form id="kc-form-login" onsubmit="login.disabled = true; return true;" action="http://op.example/realms/bench/login-actions/authenticate?session_code=a&amp;execution=b&amp;client_id=x" method="post">` +
				`<input id="username" name="username" type="text"><input type="hidden" id="id-hidden-input" name="credentialId"/></form>`,
			"http://op.example/realms/bench/login-actions/authenticate?session_code=a&execution=b&client_id=x",
			[][2]string{{"credentialId", ""}}},
		{"reference OP relative action",
			`<FORM method="POST" action="/login/username" style="x"><input type="hidden" name="id" value="r-1"><input name=password type=password></FORM>`,
			"http://op.example/login/username", [][2]string{{"id", "r-1"}}},
		{"GET form skipped, unquoted attributes",
			`<form action=/search><input type=hidden name=q value=1></form><form method=post action=login?a=1&amp;b=2><input type=hidden name=t value='x"y'></form>`,
			"http://op.example/realms/bench/protocol/openid-connect/login?a=1&b=2", [][2]string{{"t", `x"y`}}},
		{"no action: the page itself",
			`<formula></formula><form method="post"><input type="hidden" name="a" value="&lt;1&gt;"><input type="text" name="b" value="2"></form><input type="hidden" name="outside">`,
			base.String(), [][2]string{{"a", "<1>"}}},
		{"no POST form", `<html><form action="/x"></form><p>error</p></html>`, "", nil},
		{"empty", ``, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ParseForm([]byte(tt.page), base)
			if tt.action == "" {
				if f != nil {
					t.Fatalf("found form %+v", f)
				}
				return
			}
			if f == nil {
				t.Fatal("no form found")
			}
			if f.Action.String() != tt.action || !slices.Equal(f.Hidden, tt.hidden) {
				t.Errorf("action %s hidden %v, want %s %v", f.Action, f.Hidden, tt.action, tt.hidden)
			}
		})
	}
}
