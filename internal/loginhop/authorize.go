package loginhop

import (
	"crypto/rand"
	"fmt"
	"net/url"
)

// Authorization is a client's authorization request (response_type=code)
// and the redirect URI its login ends at, safe for concurrent use.
type Authorization struct {
	request  *url.URL // the endpoint with client_id, response_type, scope, redirect_uri
	redirect *url.URL
}

// NewAuthorization checks the endpoint and the redirect URI.
func NewAuthorization(endpoint, clientID, redirectURI, scope string) (*Authorization, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("authorization endpoint %q: %w", endpoint, err)
	}
	redirect, err := url.Parse(redirectURI)
	if err != nil {
		return nil, fmt.Errorf("redirect URI %q: %w", redirectURI, err)
	}
	q := u.Query()
	q.Set("client_id", clientID)
	q.Set("response_type", "code")
	q.Set("scope", scope)
	q.Set("redirect_uri", redirectURI)
	u.RawQuery = q.Encode()
	return &Authorization{request: u, redirect: redirect}, nil
}

// Start is a login's authorization request with a new state, and the
// state: 26 random characters (Hydra wants at least 8).
func (a *Authorization) Start() (*url.URL, string) {
	state := rand.Text()
	u := *a.request
	u.RawQuery += "&state=" + state
	return &u, state
}

// Redirect is the client's redirect URI.
func (a *Authorization) Redirect() *url.URL { return a.redirect }

// IsCallback reports whether loc goes to the client's redirect URI
// (scheme, host and path).
func (a *Authorization) IsCallback(loc *url.URL) bool {
	return loc.Scheme == a.redirect.Scheme && loc.Host == a.redirect.Host && loc.Path == a.redirect.Path
}
