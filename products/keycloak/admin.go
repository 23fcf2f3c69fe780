package keycloak

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// Admin REST calls (https://www.keycloak.org/docs-api/latest/rest-api/):
// each creation answers 201 Created.

// Realm is the realm to create. Realms are created disabled unless enabled.
type Realm struct {
	Name                string
	AccessTokenLifespan int // seconds
}

// CreateRealm creates an enabled realm (POST /admin/realms).
func (c *Client) CreateRealm(ctx context.Context, r Realm) error {
	body := map[string]any{"realm": r.Name, "enabled": true, "accessTokenLifespan": r.AccessTokenLifespan}
	return c.admin(ctx, "creating realm "+r.Name, http.MethodPost, "", http.StatusCreated, body, nil)
}

// ConfidentialClient is an OIDC client with a secret (client_secret_basic)
// that may use client_credentials (service account), the password grant
// (direct access grants) and the authorization code flow.
type ConfidentialClient struct {
	ClientID    string
	Secret      string // a secret
	RedirectURI string
}

// CreateClient creates the client in realm and returns its id (the UUID
// the admin API addresses it by), looked up by clientId.
func (c *Client) CreateClient(ctx context.Context, realm string, cc ConfidentialClient) (string, error) {
	body := map[string]any{
		"clientId": cc.ClientID, "secret": cc.Secret, "publicClient": false,
		"serviceAccountsEnabled": true, "directAccessGrantsEnabled": true, "standardFlowEnabled": true,
		"redirectUris": []string{cc.RedirectURI},
	}
	path := "/" + url.PathEscape(realm) + "/clients"
	if err := c.admin(ctx, "creating client "+cc.ClientID, http.MethodPost, path, http.StatusCreated, body, nil); err != nil {
		return "", err
	}
	return c.ClientUUID(ctx, realm, cc.ClientID)
}

// ClientUUID looks a client up by its clientId (GET .../clients?clientId=).
func (c *Client) ClientUUID(ctx context.Context, realm, clientID string) (string, error) {
	var out []struct {
		ID       string `json:"id"`
		ClientID string `json:"clientId"`
	}
	path := "/" + url.PathEscape(realm) + "/clients?clientId=" + url.QueryEscape(clientID)
	what := "looking up client " + clientID
	if err := c.admin(ctx, what, http.MethodGet, path, http.StatusOK, nil, &out); err != nil {
		return "", err
	}
	for _, o := range out {
		if o.ClientID == clientID && o.ID != "" {
			return o.ID, nil
		}
	}
	return "", fmt.Errorf("%s (GET /admin/realms%s): not in the answer (%d clients)", what, path, len(out))
}

// AddAudienceMapper adds an oidc-audience-mapper named name to the client
// with id uuid: it puts audience into access tokens and introspection
// answers. Without it, Keycloak 26 answers {"active":false} to a client
// introspecting its own tokens ("Client 'bench-svc' is not in the token
// audience").
func (c *Client) AddAudienceMapper(ctx context.Context, realm, uuid, name, audience string) error {
	body := map[string]any{
		"name": name, "protocol": "openid-connect", "protocolMapper": "oidc-audience-mapper",
		"config": map[string]string{
			"included.client.audience": audience, "access.token.claim": "true",
			"id.token.claim": "false", "introspection.token.claim": "true",
		},
	}
	path := "/" + url.PathEscape(realm) + "/clients/" + url.PathEscape(uuid) + "/protocol-mappers/models"
	return c.admin(ctx, "creating the audience mapper "+name, http.MethodPost, path, http.StatusCreated, body, nil)
}

// User is a user with a verified email and a permanent password. Without
// email, first and last name Keycloak's password grant answers "Account is
// not fully set up".
type User struct {
	Username, Email, FirstName, LastName string
	Password                             string // a secret
}

// CreateUser creates an enabled user (POST .../users).
func (c *Client) CreateUser(ctx context.Context, realm string, u User) error {
	body := map[string]any{
		"username": u.Username, "enabled": true, "email": u.Email, "emailVerified": true,
		"firstName": u.FirstName, "lastName": u.LastName,
		"credentials": []map[string]any{{"type": "password", "value": u.Password, "temporary": false}},
	}
	path := "/" + url.PathEscape(realm) + "/users"
	return c.admin(ctx, "creating user "+u.Username, http.MethodPost, path, http.StatusCreated, body, nil)
}
