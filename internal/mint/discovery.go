package mint

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// endpoints are the URLs a network flow calls.
type endpoints struct {
	token, auth string
}

// resolveEndpoints takes --token-url/--auth-url as given and discovers the
// missing ones from the issuer's openid-configuration; a login flow whose
// document has no authorization_endpoint takes its fallback, if any
// (authFallback).
func resolveEndpoints(ctx context.Context, w *worker, cfg *Config) (endpoints, error) {
	ep := endpoints{token: cfg.TokenURL, auth: cfg.AuthURL}
	needAuth := needsAuthEndpoint(cfg.Flow) && ep.auth == ""
	if ep.token != "" && !needAuth {
		return ep, nil
	}
	doc, err := discover(ctx, w, cfg.Issuer)
	if err != nil {
		return ep, err
	}
	if ep.token == "" {
		if doc.Token == "" {
			return ep, fmt.Errorf("discovery at %s: no token_endpoint", cfg.Issuer)
		}
		ep.token = doc.Token
	}
	if needAuth {
		if ep.auth = doc.Auth; ep.auth == "" {
			ep.auth = authFallback(cfg.Flow, cfg.Issuer)
		}
		if ep.auth == "" {
			return ep, fmt.Errorf("discovery at %s: no authorization_endpoint", cfg.Issuer)
		}
	}
	return ep, nil
}

type discoveryDoc struct {
	Token string `json:"token_endpoint"`
	Auth  string `json:"authorization_endpoint"`
}

func discover(ctx context.Context, w *worker, issuer string) (*discoveryDoc, error) {
	u := strings.TrimRight(issuer, "/") + "/.well-known/openid-configuration"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := w.do(w.hc, req)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("discovery: %w", newHTTPError(req, resp.StatusCode, w.buf.Bytes()))
	}
	doc := new(discoveryDoc)
	if err := json.Unmarshal(w.buf.Bytes(), doc); err != nil {
		return nil, fmt.Errorf("discovery: GET %s: not a JSON document: %v", u, err)
	}
	return doc, nil
}
