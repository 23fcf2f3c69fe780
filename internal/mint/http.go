package mint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/logsafe"
	"github.com/idpbench/idpbench/internal/oauthform"
)

// maxBody bounds a response body we read; token responses are a few KB.
const maxBody = 1 << 20

// newHTTPClient returns a client with its own keep-alive transport. Redirects
// are never followed: the admin-accept flow reads each Location itself.
func newHTTPClient(timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          8,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// clientAuth authenticates a client at the token endpoint, either with an
// HTTP Basic header (precomputed once) or with client_id/client_secret in the body.
type clientAuth struct {
	client oauthform.Client
	header string // "Basic ..." (oauthform.Client.BasicHeader), "" when post
}

func newClientAuth(id, secret, method string) clientAuth {
	c := oauthform.Client{ID: id, Secret: secret, Auth: oauthform.Basic}
	if method == "post" {
		c.Auth = oauthform.Post
	}
	return clientAuth{client: c, header: c.BasicHeader()}
}

// encode renders a grant's form body, adding the client's credentials when
// they travel in the body.
func (a clientAuth) encode(form url.Values) string {
	return a.client.Form(form).Encode()
}

// worker holds what one minting goroutine reuses between credentials.
type worker struct {
	hc  *http.Client
	buf bytes.Buffer
}

// do sends req and reads the whole body into w.buf, so the connection goes
// back to the keep-alive pool. Transport errors name the method and the URL
// without its query (which may carry challenges or codes).
func (w *worker) do(hc *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := hc.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("%s %s: %w", req.Method, logsafe.URL(req.URL), err)
	}
	defer resp.Body.Close()
	w.buf.Reset()
	if _, err := w.buf.ReadFrom(io.LimitReader(resp.Body, maxBody)); err != nil {
		return nil, fmt.Errorf("%s %s: reading response: %w", req.Method, logsafe.URL(req.URL), err)
	}
	return resp, nil
}

// postToken POSTs a form (already encoded, client credentials included when
// they go in the body) to a token endpoint and parses the token response.
func (w *worker) postToken(ctx context.Context, hc *http.Client, endpoint, body string, auth clientAuth) (*tokenResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if auth.header != "" {
		req.Header.Set("Authorization", auth.header)
	}
	resp, err := w.do(hc, req)
	if err != nil {
		return nil, err
	}
	return parseTokenResponse(req, resp.StatusCode, w.buf.Bytes())
}

// tokenResponse is an RFC 6749 token response (plus Keycloak's refresh_expires_in).
type tokenResponse struct {
	AccessToken      string  `json:"access_token"`
	RefreshToken     string  `json:"refresh_token"`
	IDToken          string  `json:"id_token"`
	ExpiresIn        seconds `json:"expires_in"`
	RefreshExpiresIn seconds `json:"refresh_expires_in"`
}

func parseTokenResponse(req *http.Request, status int, body []byte) (*tokenResponse, error) {
	if status != http.StatusOK {
		return nil, newHTTPError(req, status, body)
	}
	tr := new(tokenResponse)
	if err := json.Unmarshal(body, tr); err != nil {
		return nil, fmt.Errorf("%s %s: HTTP 200 but not a JSON token response: %v", req.Method, logsafe.URL(req.URL), err)
	}
	return tr, nil
}

// seconds is a JSON number of seconds that some servers send as a string.
type seconds int64

func (s *seconds) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(strings.Trim(string(b), `"`), 10, 64)
	if err != nil {
		return fmt.Errorf("expires_in %s: not a number of seconds", b)
	}
	*s = seconds(v)
	return nil
}

// HTTPError is a non-success answer from the server: the status and, when
// the body is an OAuth error object, its error and error_description.
type HTTPError struct {
	Op          string // "POST http://host/path" (never the query)
	Status      int    // HTTP status code; 0 for an error= redirect
	Code        string // OAuth "error"
	Description string // OAuth "error_description"
	Body        string // a short printable excerpt when the body is not an OAuth error
}

func (e *HTTPError) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	if e.Code != "" {
		b.WriteString(": " + e.Code)
	}
	if e.Description != "" {
		b.WriteString(": " + e.Description)
	}
	if e.Code == "" && e.Body != "" {
		b.WriteString(": " + e.Body)
	}
	return b.String()
}

func newHTTPError(req *http.Request, status int, body []byte) *HTTPError {
	e := &HTTPError{Op: req.Method + " " + logsafe.URL(req.URL), Status: status}
	var oe struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
		Message     string `json:"message"` // some admin APIs
	}
	if json.Unmarshal(body, &oe) == nil && (oe.Error != "" || oe.Description != "") {
		e.Code, e.Description = logsafe.Text(oe.Error), logsafe.Text(oe.Description)
		return e
	}
	e.Body = logsafe.Text(string(body))
	return e
}
