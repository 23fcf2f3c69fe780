package mint

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/idpbench/idpbench/internal/mint/minttest"
)

// testKey writes an RSA key as PKCS#1 PEM, PKCS#8 PEM and Zitadel JSON files.
func testKey(t *testing.T) (*rsa.PrivateKey, map[string]string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pkcs1 := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8 := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	sa, _ := json.Marshal(map[string]string{"type": "serviceaccount", "keyId": "kid-sa", "key": string(pkcs1), "userId": "user-123"})
	app, _ := json.Marshal(map[string]string{"type": "application", "keyId": "kid-app", "key": string(pkcs8), "appId": "app-9", "clientId": "client-456@proj"})
	files := map[string]string{}
	for name, data := range map[string][]byte{"pkcs1.pem": pkcs1, "pkcs8.pem": pkcs8, "sa.json": sa, "app.json": app,
		"broken.json": []byte(`{"type":"serviceaccount","keyId":`), "nokey.json": []byte(`{"keyId":"k","userId":"u"}`),
		"garbage.pem": []byte("not a key\n")} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		files[name] = p
	}
	return key, files
}

func TestJWTFlows(t *testing.T) {
	key, files := testKey(t)
	tests := []struct {
		name, flow, file string
		mod              func(*Config)
		kind, kid        string
		iss, sub         string
		aud              []string // default: the one audience of cfg
	}{
		{name: "jwt-bearer zitadel key", flow: FlowJWTBearer, file: "sa.json", kind: "assertion", kid: "kid-sa", iss: "user-123", sub: "user-123"},
		{name: "client-assertion zitadel app key", flow: FlowClientAssertion, file: "app.json", kind: "client_assertion", kid: "kid-app", iss: "client-456@proj", sub: "client-456@proj"},
		{name: "jwt-bearer pem with flags", flow: FlowJWTBearer, file: "pkcs1.pem", mod: func(c *Config) { c.KeyID, c.JWTIss = "key1", "service" },
			kind: "assertion", kid: "key1", iss: "service", sub: "service"},
		{name: "client-assertion pkcs8 with client id", flow: FlowClientAssertion, file: "pkcs8.pem", mod: func(c *Config) { c.KeyID, c.ClientID, c.JWTSub = "k8", "cid", "other" },
			kind: "client_assertion", kid: "k8", iss: "cid", sub: "other"},
		{name: "flags override key file", flow: FlowJWTBearer, file: "sa.json", mod: func(c *Config) { c.KeyID, c.JWTIss = "kid-x", "iss-x" },
			kind: "assertion", kid: "kid-x", iss: "iss-x", sub: "iss-x"},
		{name: "several audiences", flow: FlowJWTBearer, file: "sa.json", mod: func(c *Config) { c.Audience = "http://localhost:9998/,service" },
			kind: "assertion", kid: "kid-sa", iss: "user-123", sub: "user-123", aud: []string{"http://localhost:9998/", "service"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "a.pool")
			cfg := Config{Flow: tt.flow, KeyFile: files[tt.file], Audience: "http://localhost:9998/", TTL: 30 * time.Minute,
				N: 25, Parallel: 3, Emit: EmitAccessToken, ClientAuth: "basic", Users: 1, MaxFailures: 1, Timeout: time.Second, Product: "fake", Output: out}
			if tt.mod != nil {
				tt.mod(&cfg)
			}
			start := time.Now()
			if err := Run(context.Background(), cfg, io.Discard, io.Discard); err != nil {
				t.Fatalf("Run: %v", err)
			}
			p := minttest.ReadPool(t, out)
			if p.Header["kind"] != tt.kind || len(p.Creds) != 25 {
				t.Fatalf("header %v, %d credentials", p.Header, len(p.Creds))
			}
			jtis := map[string]bool{}
			for _, c := range p.Creds {
				claims := verifyAssertion(t, c, &key.PublicKey, tt.kid)
				if claims.Issuer != tt.iss || claims.Subject != tt.sub {
					t.Errorf("iss=%q sub=%q, want %q %q", claims.Issuer, claims.Subject, tt.iss, tt.sub)
				}
				want := tt.aud
				if want == nil {
					want = []string{"http://localhost:9998/"}
				}
				if !slices.Equal(claims.Audience, want) {
					t.Errorf("aud = %v, want %v", claims.Audience, want)
				}
				exp := claims.ExpiresAt.Sub(claims.IssuedAt.Time)
				if exp != 30*time.Minute || claims.IssuedAt.Before(start.Add(-time.Second)) {
					t.Errorf("iat %v exp %v: want exp = iat + 30m, iat >= start", claims.IssuedAt, claims.ExpiresAt)
				}
				jtis[claims.ID] = true
			}
			if len(jtis) != 25 {
				t.Errorf("%d distinct jti among 25 assertions", len(jtis))
			}
			if exp, err := time.Parse(time.RFC3339, p.Header["expires"]); err != nil || exp.Sub(start) > 31*time.Minute || exp.Sub(start) < 29*time.Minute {
				t.Errorf("header expires=%q, want start+30m", p.Header["expires"])
			}
		})
	}
}

func verifyAssertion(t *testing.T, s string, pub *rsa.PublicKey, kid string) *jwt.RegisteredClaims {
	t.Helper()
	claims := new(jwt.RegisteredClaims)
	tok, err := jwt.ParseWithClaims(s, claims, func(tok *jwt.Token) (any, error) { return pub, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuedAt(), jwt.WithExpirationRequired())
	if err != nil {
		t.Fatalf("assertion does not verify: %v", err)
	}
	if tok.Header["kid"] != kid {
		t.Errorf("kid = %v, want %q", tok.Header["kid"], kid)
	}
	if claims.ID == "" {
		t.Error("no jti")
	}
	return claims
}

func TestKeyFileErrors(t *testing.T) {
	_, files := testKey(t)
	tests := []struct {
		file string
		mod  func(*Config)
		want string
	}{
		{"broken.json", nil, "malformed JSON"},
		{"nokey.json", nil, `no "key"`},
		{"garbage.pem", nil, "not a Zitadel JSON key nor a PEM RSA private key"},
		{"pkcs1.pem", func(c *Config) { c.JWTIss = "x" }, "pass --kid"},
		{"pkcs1.pem", func(c *Config) { c.KeyID = "k" }, "pass --iss"},
	}
	for _, tt := range tests {
		t.Run(tt.file+" "+tt.want, func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{Flow: FlowJWTBearer, KeyFile: files[tt.file], Audience: "a", TTL: time.Minute, N: 1, Parallel: 1,
				Emit: EmitAccessToken, ClientAuth: "basic", Users: 1, MaxFailures: 1, Timeout: time.Second, Output: filepath.Join(dir, "p")}
			if tt.mod != nil {
				tt.mod(&cfg)
			}
			err := Run(context.Background(), cfg, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), files[tt.file]) {
				t.Errorf("err = %v, want it to name %s and say %q", err, files[tt.file], tt.want)
			}
			minttest.AssertEmptyDir(t, dir)
		})
	}
}
