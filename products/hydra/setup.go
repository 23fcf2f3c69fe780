// Package hydra is everything idpbench knows of Ory Hydra: its entry
// (product.go), its readback (readback.go), and its provisioning through
// the admin API (setup.go): one confidential client for every scenario,
// checked by a client_credentials grant before its secret is written.
package hydra

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/logsafe"
	"github.com/idpbench/idpbench/internal/oauthform"
)

// SummarySchema names the setup summary's format.
const SummarySchema = "idpbench.hydra-setup/v1"

// The client every scenario uses: client_secret_basic, the grants the
// scenarios need, and the scopes that give user tokens a refresh token.
var (
	GrantTypes = []string{"client_credentials", "authorization_code", "refresh_token"}
	Scope      = "openid offline_access"
)

// SetupConfig is one provisioning run.
type SetupConfig struct {
	AdminURL       string // Hydra's admin API root, e.g. http://127.0.0.1:4445
	Issuer         string // the public issuer; its oauth2/token checks the client
	ClientID       string // the client to create; also its secret file's name
	RedirectURI    string // its redirect URI (the headless login's callback)
	OutDir         string // existing directory for the secret file
	RequestTimeout time.Duration
}

// Summary is what Setup prints: names and files, never a secret.
type Summary struct {
	Schema        string   `json:"schema"`
	AdminURL      string   `json:"admin_url"`
	TokenEndpoint string   `json:"token_endpoint"`
	ClientID      string   `json:"client_id"`
	SecretFile    string   `json:"secret_file"`
	GrantTypes    []string `json:"grant_types"`
	Scope         string   `json:"scope"`
	RedirectURI   string   `json:"redirect_uri"`
	AuthMethod    string   `json:"token_endpoint_auth_method"`
}

// Validate checks the configuration; its errors are usage errors naming the flag.
func (c *SetupConfig) Validate() error {
	for _, f := range []struct{ flag, v string }{{"--admin-url", c.AdminURL}, {"--issuer", c.Issuer}, {"--redirect-uri", c.RedirectURI}} {
		u, err := url.Parse(f.v)
		if f.v == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return cli.Usagef("%s: want an http(s) URL, got %q", f.flag, f.v)
		}
	}
	if c.ClientID == "" || strings.ContainsAny(c.ClientID, "/\\ ") {
		return cli.Usagef("--client-id: want a name without '/', '\\' or spaces, got %q", c.ClientID)
	}
	if fi, err := os.Stat(c.OutDir); c.OutDir == "" || err != nil || !fi.IsDir() {
		return cli.Usagef("--out-dir: want an existing directory, got %q", c.OutDir)
	}
	return nil
}

// Setup creates the client through the admin API, checks it with a
// client_credentials grant at the issuer's token endpoint, and only then
// writes its secret (0600, OutDir/ClientID). stdout gets the Summary, stderr
// one line per step. An error names the call and its HTTP status, never the
// secret; a client created before a failed check stays in Hydra.
func Setup(ctx context.Context, cfg SetupConfig, stdout, stderr io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	hc := &http.Client{Timeout: cfg.RequestTimeout}
	defer hc.CloseIdleConnections()
	secret := rand.Text() // 26 base32 characters: nothing to escape in Basic credentials
	sum := Summary{
		Schema: SummarySchema, AdminURL: strings.TrimRight(cfg.AdminURL, "/"),
		TokenEndpoint: strings.TrimRight(cfg.Issuer, "/") + "/oauth2/token",
		ClientID:      cfg.ClientID, SecretFile: filepath.Join(cfg.OutDir, cfg.ClientID),
		GrantTypes: GrantTypes, Scope: Scope, RedirectURI: cfg.RedirectURI, AuthMethod: "client_secret_basic",
	}
	steps := []struct {
		what string
		fn   func() error
	}{
		{"client " + cfg.ClientID + " (client_secret_basic; " + strings.Join(GrantTypes, ", ") + ")", func() error {
			body, _ := json.Marshal(map[string]any{
				"client_id": cfg.ClientID, "client_secret": secret, "grant_types": GrantTypes,
				"response_types": []string{"code"}, "scope": Scope, "redirect_uris": []string{cfg.RedirectURI},
				"token_endpoint_auth_method": sum.AuthMethod,
			})
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, sum.AdminURL+"/admin/clients", bytes.NewReader(body))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			return call(hc, "creating client "+cfg.ClientID, req, http.StatusCreated, secret)
		}},
		{"check: a client_credentials grant", func() error {
			req, err := oauthform.Request(ctx, sum.TokenEndpoint, oauthform.ClientCredentials(""),
				oauthform.Client{ID: cfg.ClientID, Secret: secret})
			if err != nil {
				return err
			}
			return call(hc, "client_credentials check", req, http.StatusOK, secret)
		}},
		{"secret file " + sum.SecretFile, func() error {
			return atomicfile.Write(sum.SecretFile, 0o600, []byte(secret+"\n"), nil)
		}},
	}
	for i, st := range steps {
		fmt.Fprintf(stderr, "provision hydra: [%d/%d] %s\n", i+1, len(steps), st.what)
		if err := st.fn(); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(sum)
}

// call does req and wants status; the error names what, the status and
// Hydra's error text, with secret removed should the server echo it.
func call(hc *http.Client, what string, req *http.Request, want int, secret string) error {
	resp, err := hc.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // without the URL's query
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == want {
		return nil
	}
	var e struct {
		Error string `json:"error"`
		Desc  string `json:"error_description"`
	}
	msg := string(data)
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		msg = strings.TrimSpace(e.Error + " " + e.Desc)
	}
	return fmt.Errorf("%s: HTTP %d: %s", what, resp.StatusCode, logsafe.Redact(logsafe.Text(msg), secret))
}
