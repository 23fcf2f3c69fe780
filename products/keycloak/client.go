// Package keycloak is everything idpbench knows of Keycloak: its entry
// (product.go: settings, deviations, sources, N/A reasons, the adapter's
// answers, server-metric series), its readback (readback.go), and its
// provisioning through the admin REST API (a realm, a confidential client
// with an audience mapper, users sharing one password), checked with one
// request of each kind the benchmark measures (client.go, admin.go,
// setup.go, oidc.go). The facts it builds on are in
// docs/products/keycloak.md.
package keycloak

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
	"sync"
	"time"

	"github.com/idpbench/idpbench/internal/logsafe"
	"github.com/idpbench/idpbench/internal/oauthform"
)

// maxBody bounds a response body read; Keycloak's answers are a few KB.
const maxBody = 1 << 20

// tokenMargin is how long before its expiry the admin token is replaced: it
// lives 60 s by default, and a request must reach Keycloak while it is valid.
const tokenMargin = 15 * time.Second

// Client calls one Keycloak server's admin REST API as a master-realm user
// (the bootstrap admin), through the admin-cli client's password grant. It
// logs in again when the admin token is about to expire. It is safe for
// concurrent use.
type Client struct {
	base     string // server root, e.g. http://127.0.0.1:8080
	user     string
	password string // a secret, never printed
	hc       *http.Client
	now      func() time.Time

	mu      sync.Mutex
	token   string // the admin access token: a secret, never printed
	expires time.Time
}

// New returns a client for the server at base (its root URL: the admin API
// is under base/admin, the master realm under base/realms/master). hc is
// used as given, except that redirects are never followed.
func New(base, user, password string, hc *http.Client) *Client {
	nc := *hc
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{base: strings.TrimRight(base, "/"), user: user, password: password, hc: &nc, now: time.Now}
}

// APIError is a non-success answer: the call, the HTTP status and what
// Keycloak said. It never carries a token, a password or a request body.
type APIError struct {
	Call    string // "creating realm bench (POST /admin/realms)"
	Status  int    // HTTP status
	Message string // Keycloak's errorMessage, error and error_description, or an excerpt of the body
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d", e.Call, e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Login gets a fresh admin token (POST /realms/master/protocol/openid-connect/token).
func (c *Client) Login(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.login(ctx)
}

func (c *Client) login(ctx context.Context) error {
	form := url.Values{"grant_type": {"password"}, "client_id": {"admin-cli"}, "username": {c.user}, "password": {c.password}}
	var tr tokenResponse
	if err := c.form(ctx, "admin login as "+c.user, "/realms/master/protocol/openid-connect/token", form, nil, &tr); err != nil {
		return err
	}
	if tr.AccessToken == "" {
		return fmt.Errorf("admin login as %s: answer has no access_token", c.user)
	}
	life := time.Duration(tr.ExpiresIn) * time.Second
	if life <= 0 {
		life = 60 * time.Second
	}
	c.token, c.expires = tr.AccessToken, c.now().Add(life)
	return nil
}

// adminToken returns a token valid for at least tokenMargin, logging in
// again when needed.
func (c *Client) adminToken(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == "" || c.now().Add(tokenMargin).After(c.expires) {
		if err := c.login(ctx); err != nil {
			return "", err
		}
	}
	return c.token, nil
}

// admin sends one JSON request to base/admin/realms+path with the admin
// token; it fails unless the status is want. out (nil = ignore) receives the
// decoded answer.
func (c *Client) admin(ctx context.Context, what, method, path string, want int, in, out any) error {
	op := fmt.Sprintf("%s (%s /admin/realms%s)", what, method, path)
	tok, err := c.adminToken(ctx)
	if err != nil {
		return err
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s: encoding request: %w", op, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/admin/realms"+path, body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.do(op, req, want, out, tok)
}

// form POSTs an application/x-www-form-urlencoded body to base+path, with
// Basic client credentials when basic is not nil, and decodes a 200 answer
// into out.
func (c *Client) form(ctx context.Context, what, path string, form url.Values, basic *ClientCreds, out any) error {
	op := fmt.Sprintf("%s (POST %s)", what, path)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	secrets := []string{form.Get("token"), form.Get("password")}
	if basic != nil {
		req.Header.Set("Authorization", oauthform.Client{ID: basic.ID, Secret: basic.Secret}.BasicHeader())
		secrets = append(secrets, basic.Secret)
	}
	return c.do(op, req, http.StatusOK, out, secrets...)
}

// do sends req and checks the status; the error names op and never carries
// the admin password or any of secrets (what req sent), should the server
// echo them.
func (c *Client) do(op string, req *http.Request, want int, out any, secrets ...string) error {
	status, data, err := c.send(req)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if status != want {
		return &APIError{Call: op, Status: status, Message: logsafe.Redact(message(data), append(secrets, c.password)...)}
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
// reused. Transport errors name neither the query nor a credential.
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

// message renders Keycloak's error body: {"errorMessage": ...} from the
// admin API, {"error", "error_description"} from the OAuth endpoints, else
// an excerpt.
func message(data []byte) string {
	var body struct {
		ErrorMessage string `json:"errorMessage"`
		Error        string `json:"error"`
		Desc         string `json:"error_description"`
	}
	msg := string(data)
	if json.Unmarshal(data, &body) == nil && (body.ErrorMessage != "" || body.Error != "") {
		msg = strings.TrimSpace(strings.Join([]string{body.ErrorMessage, body.Error, body.Desc}, " "))
	}
	return logsafe.Text(msg)
}
