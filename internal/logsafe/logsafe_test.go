package logsafe

import (
	"net/url"
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	if got := Text("a\r\n\tb\x00  c"); got != "a b c" {
		t.Errorf("Text = %q, want one line of printable words", got)
	}
	if got := Text(strings.Repeat("x", 400)); len(got) != 303 || !strings.HasSuffix(got, "...") {
		t.Errorf("Text of 400 characters: %d characters, want 300 and ...", len(got))
	}
}

func TestURL(t *testing.T) {
	u, _ := url.Parse("https://user:pw@idp.example/cb?code=secret-code&state=s#frag")
	if got := URL(u); got != "https://idp.example/cb" {
		t.Errorf("URL = %q", got)
	}
	if u.RawQuery == "" || u.User == nil {
		t.Error("URL changed its argument")
	}
}

func TestRedact(t *testing.T) {
	if got := Redact("bad secret s3cr3t and pw, s3cr3t again", "s3cr3t", "pw"); got != "bad secret [redacted] and pw, [redacted] again" {
		t.Errorf("Redact = %q", got)
	}
}
