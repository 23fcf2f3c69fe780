package spring

import (
	"slices"
	"strings"
	"testing"
)

// What 7.0.6 stored in oauth2_registered_client for bench-svc (read on the
// running server; Jackson 3 writes durations as ISO-8601).
const (
	storedTokenSettings  = `{"@class":"java.util.Collections$UnmodifiableMap","settings.token.reuse-refresh-tokens":true,"settings.token.x509-certificate-bound-access-tokens":false,"settings.token.id-token-signature-algorithm":["org.springframework.security.oauth2.jose.jws.SignatureAlgorithm","RS256"],"settings.token.access-token-time-to-live":["java.time.Duration","PT1H"],"settings.token.access-token-format":{"@class":"org.springframework.security.oauth2.server.authorization.settings.OAuth2TokenFormat","value":"self-contained"},"settings.token.refresh-token-time-to-live":["java.time.Duration","PT1H"],"settings.token.authorization-code-time-to-live":["java.time.Duration","PT5M"],"settings.token.device-code-time-to-live":["java.time.Duration","PT5M"]}`
	storedClientSettings = `{"@class":"java.util.Collections$UnmodifiableMap","settings.client.require-proof-key":false,"settings.client.require-authorization-consent":false}`
)

func TestDescribeTokenSettings(t *testing.T) {
	got, err := describeTokenSettings(storedTokenSettings)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"access token lifespan", "3600 s"}, {"refresh token lifespan", "3600 s"},
		{"authorization code lifespan", "300 s"}, {"access token format", "self-contained"},
		{"refresh token rotation", "off: a refresh token stays valid after use (reuse-refresh-tokens true)"}}
	var pairs [][2]string
	for _, f := range got {
		pairs = append(pairs, [2]string{f[0], f[1]})
	}
	if !slices.Equal(pairs, want) {
		t.Errorf("got %q\nwant %q", pairs, want)
	}
	// Jackson 2's seconds still read; a shape of neither fails naming the key.
	old := strings.ReplaceAll(storedTokenSettings, `"PT1H"`, `3600.000000000`)
	if got, err := describeTokenSettings(old); err != nil || got[0][1] != "3600 s" {
		t.Errorf("seconds: %q, %v", got, err)
	}
	bad := strings.ReplaceAll(storedTokenSettings, `"PT5M"`, `"P1Y"`)
	if _, err := describeTokenSettings(bad); err == nil || !strings.Contains(err.Error(), "authorization-code-time-to-live") {
		t.Errorf("P1Y: %v, want an error naming the key", err)
	}
}

func TestDescribeClientSettings(t *testing.T) {
	got, err := describeClientSettings(storedClientSettings)
	if err != nil {
		t.Fatal(err)
	}
	if got[0][1] != "not required (settings.client.require-proof-key false)" || got[1][0] != "consent page" {
		t.Errorf("got %q", got)
	}
	if _, err := describeClientSettings(`{}`); err == nil {
		t.Error("no settings: want an error")
	}
}

func TestDescribeSecret(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{bcrypt}$2a$10$abcdefghijklmnopqrstuv0123456789abcdefghijklmnopqrstu", "bcrypt $2a$, cost 10 ({bcrypt}, DelegatingPasswordEncoder)"},
		{"{noop}secret", "none: {noop}, stored in plain"},
		{"{pbkdf2}5d923b44a6d129f3ddf3e3c8d29412723dcbde72445e8ef6bf3b508fbf17fa4ed4d6b99ca763d8dc", "{pbkdf2} (DelegatingPasswordEncoder)"},
	} {
		got, err := describeSecret(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("%.12s: %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if strings.Contains(got, "secret") || strings.Contains(got, "abcdef") {
			t.Errorf("%.12s: the description %q shows the stored value", tc.in, got)
		}
	}
	for _, in := range []string{"secret", "{bcrypt}nothash", "{bcrypt}$2a$x$y"} {
		if _, err := describeSecret(in); err == nil {
			t.Errorf("%q: want an error", in)
		}
	}
}
