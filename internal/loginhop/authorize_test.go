package loginhop

import (
	"net/url"
	"testing"
)

func TestAuthorization(t *testing.T) {
	a, err := NewAuthorization("http://op/auth?prompt=login", "web", "http://127.0.0.1/cb", "openid offline_access")
	if err != nil {
		t.Fatal(err)
	}
	u, state := a.Start()
	q := u.Query()
	if u.Host != "op" || u.Path != "/auth" || q.Get("prompt") != "login" || q.Get("client_id") != "web" ||
		q.Get("response_type") != "code" || q.Get("scope") != "openid offline_access" ||
		q.Get("redirect_uri") != "http://127.0.0.1/cb" || len(state) != 26 || q.Get("state") != state {
		t.Errorf("authorization request %s, state %q", u, state)
	}
	if u2, state2 := a.Start(); state2 == state || u2.Query().Get("state") != state2 {
		t.Errorf("a second login's request %s has state %q, the first's %q", u2, state2, state)
	}
	for loc, want := range map[string]bool{
		"http://127.0.0.1/cb?code=c&state=s": true, "http://127.0.0.1/cb": true,
		"https://127.0.0.1/cb?code=c": false, "http://127.0.0.1:80/cb?code=c": false, "http://127.0.0.1/cbx?code=c": false,
		"http://localhost/cb?code=c": false,
	} {
		u, _ := url.Parse(loc)
		if got := a.IsCallback(u); got != want {
			t.Errorf("IsCallback(%s) = %v, want %v", loc, got, want)
		}
	}
	if a.Redirect().String() != "http://127.0.0.1/cb" {
		t.Errorf("Redirect() %s", a.Redirect())
	}
	for _, bad := range [][2]string{{"http://[::1", "http://127.0.0.1/cb"}, {"http://op/auth", "http://[::1"}} {
		if _, err := NewAuthorization(bad[0], "web", bad[1], "openid"); err == nil {
			t.Errorf("NewAuthorization(%q, %q) accepted a URL that does not parse", bad[0], bad[1])
		}
	}
}
