package mint

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/oauthform"
)

// credential is one minted line and when it stops being usable (zero = unknown).
type credential struct {
	value string
	exp   time.Time
}

// grantFlow mints tokens with one POST to the token endpoint per credential:
// client_credentials (constant body) and the resource-owner password grant.
type grantFlow struct {
	endpoint string
	auth     clientAuth
	emit     string
	body     func(i int) string
}

func (f *grantFlow) mint(ctx context.Context, w *worker, i int) (credential, error) {
	tr, err := w.postToken(ctx, w.hc, f.endpoint, f.body(i), f.auth)
	if err != nil {
		return credential{}, err
	}
	return tr.pick(f.emit, time.Now())
}

func newClientCredentials(cfg *Config, endpoint string) *grantFlow {
	auth := newClientAuth(cfg.ClientID, cfg.ClientSecret, cfg.ClientAuth)
	body := auth.encode(oauthform.ClientCredentials(cfg.Scope)) // the same bytes for every request
	return &grantFlow{endpoint: endpoint, auth: auth, emit: cfg.Emit, body: func(int) string { return body }}
}

func newPasswordGrant(cfg *Config, endpoint string) *grantFlow {
	auth := newClientAuth(cfg.ClientID, cfg.ClientSecret, cfg.ClientAuth)
	body := func(i int) string {
		form := url.Values{
			"grant_type": {"password"},
			"username":   {perUser(cfg.Username, i, cfg.Users)},
			"password":   {cfg.Password},
		}
		if cfg.Scope != "" {
			form.Set("scope", cfg.Scope)
		}
		return auth.encode(form)
	}
	return &grantFlow{endpoint: endpoint, auth: auth, emit: cfg.Emit, body: body}
}

// perUser replaces "%d" in a user name template with i mod users.
func perUser(tmpl string, i, users int) string {
	if !strings.Contains(tmpl, "%d") {
		return tmpl
	}
	return strings.ReplaceAll(tmpl, "%d", strconv.Itoa(i%users))
}

// pick returns the token kind asked for and its expiry: expires_in (or
// refresh_expires_in) relative to now when given, else the JWT exp claim.
func (tr *tokenResponse) pick(emit string, now time.Time) (credential, error) {
	var c credential
	var lifetime seconds
	switch emit {
	case EmitAccessToken:
		c.value, lifetime = tr.AccessToken, tr.ExpiresIn
	case EmitRefreshToken:
		c.value, lifetime = tr.RefreshToken, tr.RefreshExpiresIn
	case EmitIDToken:
		c.value = tr.IDToken
	}
	if c.value == "" {
		return c, fmt.Errorf("token response has no %s%s", emit, missingHint(emit))
	}
	if strings.ContainsAny(c.value, " \t\r\n") {
		return credential{}, fmt.Errorf("token response: %s contains white space", emit)
	}
	if lifetime > 0 {
		c.exp = now.Add(time.Duration(lifetime) * time.Second)
	} else {
		c.exp = jwtExp(c.value)
	}
	return c, nil
}

func missingHint(emit string) string {
	switch emit {
	case EmitRefreshToken:
		return " (ask for scope offline_access, or enable refresh tokens for the client)"
	case EmitIDToken:
		return " (ask for scope openid)"
	}
	return ""
}

// jwtExp reads the exp claim of a JWS without verifying it; zero when the
// token is not a JWT (opaque, or encrypted) or has no exp.
func jwtExp(tok string) time.Time {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	d := json.NewDecoder(bytes.NewReader(payload))
	d.UseNumber()
	if d.Decode(&claims) != nil || claims.Exp == "" {
		return time.Time{}
	}
	f, err := claims.Exp.Float64()
	if err != nil || f <= 0 {
		return time.Time{}
	}
	return time.Unix(int64(f), 0).UTC()
}
