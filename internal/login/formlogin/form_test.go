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

// TestParseForms: what a browser would submit of each POST form: the
// user name and password inputs, checked boxes, the first named submit
// control; nothing taken from comments, scripts or a GET form.
func TestParseForms(t *testing.T) {
	base := mustURL(t, "http://127.0.0.1/login")
	page := `<!-- <form method="post" action="/commented"> -->
<script>document.write('<form method="post" action="/scripted">')</script>
<form method="get" action="/search"><input name="q"><input type="password" name="not-this"></form>
<form method="post" action="/lang"><input type="hidden" name="lang" value="en"><button name="go" value="1">Go</button></form>
<form method="POST" action="/login"><input name="tenant" type="text"><input type="email" name="email" value="">
<input type="password" name="secret"><input type="text" name="otp">
<input type="checkbox" name="remember" checked><input type="checkbox" name="news"><input type="radio" name="r" value="b" checked>
<button type="button" name="show">Show</button><input type="submit" name="login" value="Sign in"><input type="submit" name="cancel" value="No">
</form>
<form method="post" action="/consent"><input type="hidden" name="id" value="7"><button id="ok">OK</button></form>`
	forms := ParseForms([]byte(page), base)
	if len(forms) != 3 {
		t.Fatalf("%d forms, want 3 (the POST forms outside comments and scripts): %+v", len(forms), forms)
	}
	lang, login, consent := forms[0], forms[1], forms[2]
	if lang.Action.String() != "http://127.0.0.1/lang" || lang.Submit != [2]string{"go", "1"} || lang.Password != "" {
		t.Errorf("first form %+v", lang)
	}
	want := Form{User: "email", Password: "secret", Checked: [][2]string{{"remember", "on"}, {"r", "b"}}, Submit: [2]string{"login", "Sign in"}}
	if login.Action.String() != "http://127.0.0.1/login" || login.User != want.User || login.Password != want.Password ||
		!slices.Equal(login.Checked, want.Checked) || login.Submit != want.Submit {
		t.Errorf("login form %+v, want %+v", login, want)
	}
	if consent.Submit != ([2]string{}) || !slices.Equal(consent.Hidden, [][2]string{{"id", "7"}}) {
		t.Errorf("consent form %+v", consent)
	}
	if f := LoginForm([]byte(page), base); f == nil || f.Action.Path != "/login" {
		t.Errorf("LoginForm = %+v, want the form with the password input", f)
	}
	if f := LoginForm([]byte(`<form method=post action=/a></form>`), base); f == nil || f.Action.Path != "/a" {
		t.Errorf("LoginForm without a password input = %+v, want the first POST form", f)
	}
}
