// Package oauthform is how idpbench authenticates a client at a token
// endpoint and writes a token request's form, in one place: mintpool's
// grants, loadstep's scenarios and login flows, readback's lifespan grant
// and the products' setup checks (RFC 6749 2.3.1 and 4.4).
package oauthform

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
)

// Client authentication methods at the token endpoint.
const (
	Basic = "basic" // client_secret_basic (the default)
	Post  = "post"  // client_secret_post
	None  = "none"  // a public client: client_id in the body, no secret
)

// Client is a client and how it authenticates (Auth: Basic, Post or None;
// "" is Basic).
type Client struct {
	ID, Secret, Auth string
}

// BasicHeader is the Authorization header of client_secret_basic: the id
// and the secret form-encoded, then base64 (RFC 6749 2.3.1); "" when the
// client authenticates otherwise.
func (c Client) BasicHeader() string {
	if c.Auth != "" && c.Auth != Basic {
		return ""
	}
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(c.ID)+":"+url.QueryEscape(c.Secret)))
}

// Form adds the client's credentials to form where they travel in the
// body (Post: client_id and client_secret; None: client_id, when given)
// and returns form.
func (c Client) Form(form url.Values) url.Values {
	switch c.Auth {
	case Post:
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	case None:
		if c.ID != "" {
			form.Set("client_id", c.ID)
		}
	}
	return form
}

// ClientCredentials is the form of a client_credentials grant (RFC 6749
// 4.4.2), with scope when given.
func ClientCredentials(scope string) url.Values {
	form := url.Values{"grant_type": {"client_credentials"}}
	if scope != "" {
		form.Set("scope", scope)
	}
	return form
}

// Request is a POST of form to tokenURL with c's authentication, asking for
// JSON.
func Request(ctx context.Context, tokenURL string, form url.Values, c Client) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(c.Form(form).Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if h := c.BasicHeader(); h != "" {
		req.Header.Set("Authorization", h)
	}
	return req, nil
}
