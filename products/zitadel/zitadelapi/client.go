// Package zitadelapi is a small client for the parts of Zitadel's APIs
// idpbench needs: provisioning through the management (v1), admin (v1) and
// user (v2) APIs with a personal access token (Setup, the work of provision
// zitadel), the readability gate that waits for Zitadel's projections, and
// the Session API login (Flow), the login protocol loadstep and mintpool
// call session-api (authorize with x-zitadel-login-client, create a
// session, finalize the auth request; the code exchange is theirs).
//
// Every request and response shape is written down, with the documentation
// and proto it comes from, in ../zitadeltest/testdata (see its README.md),
// and checked against Zitadel's own API definitions (@zitadel/proto) by
// zitadeldefs' TestDefinitions.
package zitadelapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/idpbench/idpbench/internal/login/sessionapi"
	"github.com/idpbench/idpbench/internal/logsafe"
)

// maxBody bounds a response body read; Zitadel's answers are a few KB.
const maxBody = 1 << 20

// Client calls one Zitadel instance. Base is the instance's external URL
// (the issuer, e.g. http://localhost:8080): Zitadel answers "Instance not
// found" to any other host name.
type Client struct {
	base  string
	token string // personal access token: a secret, never printed
	org   string // x-zitadel-orgid for org-scoped v1 calls; "" = the caller's org
	hc    *http.Client
}

// New returns a client that authenticates with the personal access token
// (or any bearer token) token. hc is used as given, except that redirects are
// never followed.
func New(base, token string, hc *http.Client) *Client {
	nc := *hc
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{base: strings.TrimRight(base, "/"), token: token, hc: &nc}
}

// WithOrg returns a copy that sends x-zitadel-orgid: org on org-scoped calls.
func (c *Client) WithOrg(org string) *Client {
	cc := *c
	cc.org = org
	return &cc
}

// WithToken returns a copy that authenticates with another bearer token.
func (c *Client) WithToken(token string) *Client {
	cc := *c
	cc.token = token
	return &cc
}

// APIError is a non-success answer: the call, the HTTP status and Zitadel's
// error code and message. It never carries the token or a request body.
type APIError struct {
	Call    string // "AddProject (POST /management/v1/projects)"
	Status  int    // HTTP status
	Code    string // Zitadel's code: a gRPC code number or a connect code name
	Message string // Zitadel's message, e.g. "Errors.Project.AlreadyExists (PROJECT-...)"
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d", e.Call, e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Code != "" {
		s += " (code " + e.Code + ")"
	}
	return s
}

// scope says whether a v1 call is org-scoped (takes x-zitadel-orgid).
type scope bool

const (
	orgScoped scope = true
	unscoped  scope = false
)

// call sends one JSON request and decodes a 2xx answer into out (nil = ignore).
// in == nil sends no body.
func (c *Client) call(ctx context.Context, name, method, path string, sc scope, in, out any) error {
	op := fmt.Sprintf("%s (%s %s)", name, method, path)
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s: encoding request: %w", op, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if sc == orgScoped && c.org != "" {
		req.Header.Set("x-zitadel-orgid", c.org)
	}
	status, data, err := c.send(req)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if status < 200 || status > 299 {
		return c.apiError(op, status, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: HTTP %d but not the expected JSON: %v", op, status, err)
	}
	return nil
}

// send does req and reads the whole (bounded) body so the connection is
// reused. Transport errors name neither the query nor the token.
func (c *Client) send(req *http.Request) (int, []byte, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return 0, nil, fmt.Errorf("reading response: %w", err)
	}
	return resp.StatusCode, data, nil
}

// apiError is a non-success answer as an *APIError: Zitadel's error body
// (sessionapi.ErrorBody) in a line, the token redacted.
func (c *Client) apiError(op string, status int, data []byte) *APIError {
	code, msg := sessionapi.ErrorBody(data)
	return &APIError{Call: op, Status: status, Code: logsafe.Text(code), Message: logsafe.Text(c.redact(msg))}
}

// redact removes the token from a message, in case a server echoes it.
func (c *Client) redact(s string) string { return logsafe.Redact(s, c.token) }
