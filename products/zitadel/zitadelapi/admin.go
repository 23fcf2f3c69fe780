package zitadelapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/idpbench/idpbench/internal/mint"
)

// Provisioning calls. The v1 management calls are org-scoped: they carry
// x-zitadel-orgid when the client has an org (WithOrg). Shapes: see
// ../zitadeltest/testdata/<call>.json.

// Org is the organization of the calling user.
type Org struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	PrimaryDomain string `json:"primaryDomain"`
}

// MyOrg returns the caller's organization (GET /management/v1/orgs/me).
func (c *Client) MyOrg(ctx context.Context) (Org, error) {
	var out struct {
		Org Org `json:"org"`
	}
	err := c.call(ctx, "GetMyOrg", "GET", "/management/v1/orgs/me", unscoped, nil, &out)
	if err == nil && out.Org.ID == "" {
		err = fmt.Errorf("GetMyOrg (GET /management/v1/orgs/me): answer has no org.id")
	}
	return out.Org, err
}

// AddProject creates a project and returns its id.
func (c *Client) AddProject(ctx context.Context, name string) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	err := c.call(ctx, "AddProject", "POST", "/management/v1/projects", orgScoped, map[string]any{"name": name}, &out)
	return out.ID, need(err, "AddProject", "id", out.ID)
}

// App is a created application. ClientSecret is a secret (empty for
// private_key_jwt apps).
type App struct {
	AppID        string `json:"appId"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
}

// AddAPIApp creates an API application that authenticates with
// private_key_jwt (RFC 7523 client assertions signed with an app key).
func (c *Client) AddAPIApp(ctx context.Context, projectID, name string) (App, error) {
	body := map[string]any{"name": name, "authMethodType": "API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT"}
	var out App
	err := c.call(ctx, "AddAPIApp", "POST", "/management/v1/projects/"+url.PathEscape(projectID)+"/apps/api", orgScoped, body, &out)
	if err == nil && (out.AppID == "" || out.ClientID == "") {
		err = fmt.Errorf("AddAPIApp: answer lacks appId or clientId")
	}
	return out, err
}

// WebApp is the OIDC web application of the headless login: code flow with
// refresh tokens, client_secret_basic, opaque (bearer) access tokens unless
// JWTAccessTokens, dev mode so that an http loopback redirect URI is accepted.
type WebApp struct {
	Name            string
	RedirectURI     string
	JWTAccessTokens bool
}

// AddOIDCApp creates the web application. loginVersion is not sent: an
// authorize request that carries x-zitadel-login-client always makes a
// login-v2 auth request, whatever the app prefers (zitadel/zitadel
// internal/api/oidc/auth_request.go, CreateAuthRequest).
func (c *Client) AddOIDCApp(ctx context.Context, projectID string, w WebApp) (App, error) {
	tokenType := "OIDC_TOKEN_TYPE_BEARER"
	if w.JWTAccessTokens {
		tokenType = "OIDC_TOKEN_TYPE_JWT"
	}
	body := map[string]any{
		"name":            w.Name,
		"redirectUris":    []string{w.RedirectURI},
		"responseTypes":   []string{"OIDC_RESPONSE_TYPE_CODE"},
		"grantTypes":      []string{"OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_REFRESH_TOKEN"},
		"appType":         "OIDC_APP_TYPE_WEB",
		"authMethodType":  "OIDC_AUTH_METHOD_TYPE_BASIC",
		"version":         "OIDC_VERSION_1_0",
		"devMode":         true,
		"accessTokenType": tokenType,
	}
	var out App
	err := c.call(ctx, "AddOIDCApp", "POST", "/management/v1/projects/"+url.PathEscape(projectID)+"/apps/oidc", orgScoped, body, &out)
	if err == nil && (out.AppID == "" || out.ClientID == "" || out.ClientSecret == "") {
		err = fmt.Errorf("AddOIDCApp: answer lacks appId, clientId or clientSecret")
	}
	return out, err
}

// Key is a created key: its id and the JSON key file (a secret) that
// Zitadel returns base64-encoded in keyDetails.
type Key struct {
	ID   string
	File []byte
}

// AddAppKey adds a JSON key to an API app (no expiration date: Zitadel then
// sets none).
func (c *Client) AddAppKey(ctx context.Context, projectID, appID string) (Key, error) {
	var out struct {
		ID         string `json:"id"`
		KeyDetails []byte `json:"keyDetails"` // base64 in JSON
	}
	path := "/management/v1/projects/" + url.PathEscape(projectID) + "/apps/" + url.PathEscape(appID) + "/keys"
	if err := c.call(ctx, "AddAppKey", "POST", path, orgScoped, map[string]any{"type": "KEY_TYPE_JSON"}, &out); err != nil {
		return Key{}, err
	}
	k := Key{ID: out.ID, File: out.KeyDetails}
	return k, checkKeyFile("AddAppKey", k, "application")
}

// AddMachineUser creates a machine user (service account) whose access
// tokens are opaque (bearer) unless jwt.
func (c *Client) AddMachineUser(ctx context.Context, userName string, jwt bool) (string, error) {
	tokenType := "ACCESS_TOKEN_TYPE_BEARER"
	if jwt {
		tokenType = "ACCESS_TOKEN_TYPE_JWT"
	}
	body := map[string]any{"userName": userName, "name": userName, "accessTokenType": tokenType}
	var out struct {
		UserID string `json:"userId"`
	}
	err := c.call(ctx, "AddMachineUser", "POST", "/management/v1/users/machine", orgScoped, body, &out)
	return out.UserID, need(err, "AddMachineUser", "userId", out.UserID)
}

// AddMachineKey adds a JSON key to a machine user: the key file for the
// jwt-bearer grant (RFC 7523).
func (c *Client) AddMachineKey(ctx context.Context, userID string) (Key, error) {
	var out struct {
		KeyID      string `json:"keyId"`
		KeyDetails []byte `json:"keyDetails"`
	}
	path := "/management/v1/users/" + url.PathEscape(userID) + "/keys"
	if err := c.call(ctx, "AddMachineKey", "POST", path, orgScoped, map[string]any{"type": "KEY_TYPE_JSON"}, &out); err != nil {
		return Key{}, err
	}
	k := Key{ID: out.KeyID, File: out.KeyDetails}
	return k, checkKeyFile("AddMachineKey", k, "serviceaccount")
}

// ClientCredentials are a machine user's client_credentials id and secret.
type ClientCredentials struct {
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"` // secret
}

// GenerateMachineSecret gives a machine user a client secret.
func (c *Client) GenerateMachineSecret(ctx context.Context, userID string) (ClientCredentials, error) {
	var out ClientCredentials
	path := "/management/v1/users/" + url.PathEscape(userID) + "/secret"
	err := c.call(ctx, "GenerateMachineSecret", "PUT", path, orgScoped, struct{}{}, &out)
	if err == nil && (out.ClientID == "" || out.ClientSecret == "") {
		err = fmt.Errorf("GenerateMachineSecret: answer lacks clientId or clientSecret")
	}
	return out, err
}

// PAT is a personal access token; Token is a secret.
type PAT struct {
	TokenID string `json:"tokenId"`
	Token   string `json:"token"`
}

// AddPersonalAccessToken creates a PAT for a machine user (no expiration
// date: Zitadel then sets none).
func (c *Client) AddPersonalAccessToken(ctx context.Context, userID string) (PAT, error) {
	var out PAT
	path := "/management/v1/users/" + url.PathEscape(userID) + "/pats"
	err := c.call(ctx, "AddPersonalAccessToken", "POST", path, orgScoped, struct{}{}, &out)
	if err == nil && out.Token == "" {
		err = fmt.Errorf("AddPersonalAccessToken: answer has no token")
	}
	return out, err
}

// AddIAMMember makes a user an instance member with roles, e.g.
// IAM_LOGIN_CLIENT for the user that drives the Session API login.
func (c *Client) AddIAMMember(ctx context.Context, userID string, roles ...string) error {
	body := map[string]any{"userId": userID, "roles": roles}
	return c.call(ctx, "AddIAMMember", "POST", "/admin/v1/members", unscoped, body, nil)
}

// Member is an instance member and its roles.
type Member struct {
	UserID string   `json:"userId"`
	Roles  []string `json:"roles"`
}

// ListIAMMembers lists the instance members (no query: an instance has few).
func (c *Client) ListIAMMembers(ctx context.Context) ([]Member, error) {
	var out struct {
		Result []Member `json:"result"`
	}
	err := c.call(ctx, "ListIAMMembers", "POST", "/admin/v1/members/_search", unscoped, struct{}{}, &out)
	return out.Result, err
}

// Human is a human user with a verified email and a password that need not
// be changed.
type Human struct {
	Username   string
	OrgID      string // "" = the caller's organization
	GivenName  string
	FamilyName string
	Email      string
	Password   string // secret
}

// AddHumanUser creates a human user through the user service v2.
func (c *Client) AddHumanUser(ctx context.Context, h Human) (string, error) {
	body := map[string]any{
		"username": h.Username,
		"profile":  map[string]any{"givenName": h.GivenName, "familyName": h.FamilyName},
		"email":    map[string]any{"email": h.Email, "isVerified": true},
		"password": map[string]any{"password": h.Password, "changeRequired": false},
	}
	if h.OrgID != "" {
		body["organization"] = map[string]any{"orgId": h.OrgID}
	}
	var out struct {
		UserID string `json:"userId"`
	}
	err := c.call(ctx, "AddHumanUser", "POST", "/v2/users/human", unscoped, body, &out)
	return out.UserID, need(err, "AddHumanUser", "userId", out.UserID)
}

// User is what the readability gate reads back of a user.
type User struct {
	UserID             string   `json:"userId"`
	Username           string   `json:"username"`
	LoginNames         []string `json:"loginNames"`
	PreferredLoginName string   `json:"preferredLoginName"`
}

// GetUser reads a user through the user service v2 (HTTP 404 until the
// user projection has it).
func (c *Client) GetUser(ctx context.Context, userID string) (User, error) {
	var out struct {
		User User `json:"user"`
	}
	err := c.call(ctx, "GetUserByID", "GET", "/v2/users/"+url.PathEscape(userID), unscoped, nil, &out)
	return out.User, need(err, "GetUserByID", "user.userId", out.User.UserID)
}

// GetApp reads an application back and returns its name.
func (c *Client) GetApp(ctx context.Context, projectID, appID string) (string, error) {
	var out struct {
		App struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"app"`
	}
	path := "/management/v1/projects/" + url.PathEscape(projectID) + "/apps/" + url.PathEscape(appID)
	err := c.call(ctx, "GetAppByID", "GET", path, orgScoped, nil, &out)
	return out.App.Name, need(err, "GetAppByID", "app.id", out.App.ID)
}

// Me returns the id of the user the client's token belongs to
// (GET /auth/v1/users/me): it answers once the token is readable.
func (c *Client) Me(ctx context.Context) (string, error) {
	var out struct {
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	}
	err := c.call(ctx, "GetMyUser", "GET", "/auth/v1/users/me", unscoped, nil, &out)
	return out.User.ID, need(err, "GetMyUser", "user.id", out.User.ID)
}

// need turns a 2xx answer without the field the caller relies on into an error.
func need(err error, call, field, val string) error {
	if err == nil && val == "" {
		return fmt.Errorf("%s: answer has no %s", call, field)
	}
	return err
}

// checkKeyFile checks that keyDetails decoded to a JSON key file of the
// expected type with a key id and a private key. It names the call, never
// the key.
func checkKeyFile(call string, k Key, typ string) error {
	var kf mint.KeyFile
	d := json.NewDecoder(bytes.NewReader(k.File))
	if err := d.Decode(&kf); err != nil {
		return fmt.Errorf("%s: keyDetails is not a base64 JSON key file: %v", call, err)
	}
	switch {
	case kf.Type != typ:
		return fmt.Errorf("%s: key file type %q, want %q", call, kf.Type, typ)
	case kf.KeyID == "" || kf.Key == "":
		return fmt.Errorf("%s: key file lacks keyId or key", call)
	case kf.KeyID != k.ID && k.ID != "":
		return fmt.Errorf("%s: key file keyId %q differs from the answer's id %q", call, kf.KeyID, k.ID)
	}
	return nil
}
