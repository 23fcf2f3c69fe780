package formlogin

import (
	"html"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/login/formlogin/formlogintest"
)

// FuzzLoginForm: any login page a server sends parses or gives nil without
// a panic, a form's action resolved to an absolute URL and its hidden
// inputs named; and a form written with any hidden name and value and any
// action, HTML-escaped as the products' templates do, gives them back as a
// browser reads them (HTML's input stream: NUL as U+FFFD, CR LF and CR as
// LF).
func FuzzLoginForm(f *testing.F) {
	f.Add([]byte(formlogintest.KeycloakPage), "session_code", "S1&x=\"y\"", "/login-actions/authenticate?a=1&b=2")
	f.Add([]byte(formlogintest.RefopPage), "id", "V2_abc+123", "/login/username")
	f.Add([]byte(`<formula><form method=post action=/x><input type=hidden name=a value=b></form>`), "a", "", "")
	f.Add([]byte(`<FORM METHOD='POST'><INPUT TYPE='HIDDEN' NAME='n' VALUE='v'`), "n", "<v>", "?q")
	base, err := url.Parse("http://127.0.0.1:8080/realms/bench/protocol/openid-connect/auth?client_id=bench-web")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, page []byte, name, value, action string) {
		if form := ParseForm(page, base); form != nil {
			if !form.Action.IsAbs() {
				t.Fatalf("action %q is not absolute", form.Action)
			}
			for _, h := range form.Hidden {
				if h[0] == "" {
					t.Fatalf("a hidden input without a name: %q", form.Hidden)
				}
			}
		}
		want, err := url.Parse(browser(action)) // a CR in the fragment reaches the parser as LF
		if name == "" || err != nil {
			return
		}
		written := `<!DOCTYPE html><formula></formula><form id="kc-form-login" action="` + html.EscapeString(action) +
			`" method="post"><input type="text" name="username"/><input type="hidden" name="` + html.EscapeString(name) +
			`" value="` + html.EscapeString(value) + `"/></form>`
		form := ParseForm([]byte(written), base)
		if form == nil {
			t.Fatalf("no form in %q", written)
		}
		if got := [][2]string{{browser(name), browser(value)}}; !reflect.DeepEqual(form.Hidden, got) {
			t.Fatalf("hidden inputs %q, want %q (page %q)", form.Hidden, got, written)
		}
		if w := base.ResolveReference(want); form.Action.String() != w.String() {
			t.Fatalf("action %q, want %q", form.Action, w)
		}
	})
}

// browser is s as HTML's input stream preprocessing leaves it in an
// attribute value.
func browser(s string) string {
	return strings.NewReplacer("\x00", "\uFFFD", "\r\n", "\n", "\r", "\n").Replace(s)
}
