package keycloak

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/idpbench/idpbench/internal/oauthform"
)

// The realm's OpenID Connect endpoints, as the benchmark calls them: the
// check after setup sends each kind of measured request once.

// ClientCreds are a confidential client's id and secret, sent as HTTP Basic
// credentials. Keycloak URL-decodes them, so secrets stay alphanumeric.
type ClientCreds struct {
	ID     string
	Secret string // a secret
}

// tokenResponse is the part of a token answer the checks read.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int64  `json:"expires_in"` // seconds
}

func oidcPath(realm, endpoint string) string {
	return "/realms/" + url.PathEscape(realm) + "/protocol/openid-connect/" + endpoint
}

// ClientCredentials does a client_credentials grant and returns the access token.
func (c *Client) ClientCredentials(ctx context.Context, realm string, cc ClientCreds) (string, error) {
	var tr tokenResponse
	what := "client_credentials grant as " + cc.ID
	err := c.form(ctx, what, oidcPath(realm, "token"), oauthform.ClientCredentials(""), &cc, &tr)
	if err == nil && tr.AccessToken == "" {
		err = fmt.Errorf("%s: answer has no access_token", what)
	}
	return tr.AccessToken, err
}

// PasswordGrant does a password grant (direct access grants) with scope
// openid and returns the access and refresh tokens.
func (c *Client) PasswordGrant(ctx context.Context, realm string, cc ClientCreds, username, password string) (access, refresh string, err error) {
	var tr tokenResponse
	what := "password grant for " + username
	form := url.Values{"grant_type": {"password"}, "username": {username}, "password": {password}, "scope": {"openid"}}
	if err := c.form(ctx, what, oidcPath(realm, "token"), form, &cc, &tr); err != nil {
		return "", "", err
	}
	switch {
	case tr.AccessToken == "":
		return "", "", fmt.Errorf("%s: answer has no access_token", what)
	case tr.RefreshToken == "":
		return "", "", fmt.Errorf("%s: answer has no refresh_token", what)
	}
	return tr.AccessToken, tr.RefreshToken, nil
}

// Introspect asks whether token is active (RFC 7662), authenticated as cc.
func (c *Client) Introspect(ctx context.Context, realm string, cc ClientCreds, token string) (bool, error) {
	var out struct {
		Active bool `json:"active"`
	}
	err := c.form(ctx, "introspection as "+cc.ID, oidcPath(realm, "token/introspect"), url.Values{"token": {token}}, &cc, &out)
	return out.Active, err
}

// UserInfo returns the subject userinfo answers for the access token.
func (c *Client) UserInfo(ctx context.Context, realm, token string) (string, error) {
	path := oidcPath(realm, "userinfo")
	op := "userinfo (GET " + path + ")"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	var out struct {
		Sub string `json:"sub"`
	}
	if err := c.do(op, req, http.StatusOK, &out, token); err != nil {
		return "", err
	}
	if out.Sub == "" {
		return "", fmt.Errorf("%s: answer has no sub", op)
	}
	return out.Sub, nil
}
