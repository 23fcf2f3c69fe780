package oauthform

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// TestBasicFormEncodesFirst: RFC 6749 2.3.1 form-encodes the id and the
// secret before base64, so a secret with ':' or '%' reaches the server
// whole (Go's SetBasicAuth alone would not); the server decodes both back.
func TestBasicFormEncodesFirst(t *testing.T) {
	c := Client{ID: "svc:1", Secret: "a b%c:d"}
	req, err := Request(context.Background(), "http://127.0.0.1:1/token", ClientCredentials("openid"), c)
	if err != nil {
		t.Fatal(err)
	}
	id, secret, ok := req.BasicAuth()
	if !ok {
		t.Fatal("no Basic header")
	}
	if id, _ = url.QueryUnescape(id); id != c.ID {
		t.Errorf("id %q", id)
	}
	if secret, _ = url.QueryUnescape(secret); secret != c.Secret {
		t.Errorf("secret %q", secret)
	}
	body, _ := io.ReadAll(req.Body)
	if string(body) != "grant_type=client_credentials&scope=openid" || req.Method != http.MethodPost ||
		req.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Errorf("%s %q %v", req.Method, body, req.Header)
	}
}

// TestPostAndNone: the credentials travel in the body, and no header.
func TestPostAndNone(t *testing.T) {
	for auth, want := range map[string]string{
		Post: "client_id=c&client_secret=s&grant_type=client_credentials",
		None: "client_id=c&grant_type=client_credentials",
	} {
		c := Client{ID: "c", Secret: "s", Auth: auth}
		if h := c.BasicHeader(); h != "" {
			t.Errorf("%s: header %q", auth, h)
		}
		if got := c.Form(ClientCredentials("")).Encode(); got != want {
			t.Errorf("%s: %q, want %q", auth, got, want)
		}
	}
}
