package zitadel

import (
	"fmt"
	"slices"

	"github.com/idpbench/idpbench/internal/login/sessionapi"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/servermetrics"
	"github.com/idpbench/idpbench/products/zitadel/zitadelapi"
)

// Product is Zitadel (products/zitadel/adapter): provisioned by
// "provision zitadel", logins through the Session API.
func Product() product.Product {
	return product.Product{Name: "zitadel", InDefaultRun: true, Docs: "docs/products/zitadel.md", Part: zitadelPart, Provision: &provisionCommand,
		ComposeFile: "products/zitadel/compose.yml",
		// No registry these machines reach serves its binary or image: without
		// ZITADEL_BIN or a Docker engine its rows are N/A by design.
		NAByDesign: product.Reasons{"ZITADEL_BIN is not set and no Docker engine answers"},
		Answers:    &product.Answers{Table: zitadelTable, Setup: zitadelSetup, Config: zitadelConfig},
		// Neither can be read before Zitadel has run here once: no binary or
		// image of it can be had on these machines (docs/products/zitadel.md).
		ReadFactsNA:   "not written: Zitadel has never run on these machines, so no reader was checked against a running one (its setup summary states what provision zitadel created)",
		ServerMetrics: servermetrics.Product{NA: "not known: Zitadel has never run on these machines, so no series was read from its metrics endpoint"}}
}

// What "provision zitadel" is asked to create (the ids and files it
// created are in its summary, STATE/zitadel-setup.json): the human users
// and the OIDC web app's redirect URI. Zitadel's own benchmark asks for the
// zitadel project audience with openid.
const (
	zitadelRedirect = "http://localhost:9999/auth/callback"
	zitadelUsers    = "100"
	zitadelScope    = "openid urn:zitadel:iam:org:project:id:zitadel:aud"
	zitadelDB       = "zitadel"
)

// zitadelTable: S2 and S2l authenticate the machine user with its secret;
// S2j signs its key's assertions into a pool before the step (Zitadel's own
// benchmark signs one per iteration: the same grant). S3 is the API app
// with private_key_jwt: its client assertions are an own pool
// (client-assertions, 1000 valid for 1 h), which the ladder mints before
// S3's windows when missing or 30 minutes old (Scenario.Before). User tokens (S3, S5, S6) and S4 go through the
// Session API, authorised by the login client's PAT. Lifetimes are
// Zitadel's default OIDC settings: access tokens 12 h, refresh tokens idle
// 30 d; assertions are minted with --ttl 1h.
func zitadelTable(st *product.State) product.Table {
	issuer := st.Get("ISSUER")
	token := issuer + "/oauth/v2/token"
	var sum zitadelapi.Summary
	st.Summary(&sum)
	cc := slices.Concat(product.BasicAuth(sum.CC.ClientID, sum.CC.SecretFile), []string{"--scope", zitadelScope})
	web := product.BasicAuth(sum.Web.ClientID, sum.Web.SecretFile)
	loginClient := []string{"--login-client", sum.LoginClient.UserID, "--login-client-pat-file", sum.LoginClient.PATFile}
	users := []string{"--username", sum.Users.LoginNamePattern, "--users", zitadelUsers, "--password-file", sum.Users.PasswordFile}
	login := func(emit, mode string) *product.Pool {
		return &product.Pool{Kind: emit, Mode: mode, Flow: "session-api", Args: slices.Concat(
			[]string{"--flow", "session-api", "--issuer", issuer, "--auth-url", issuer + sessionapi.AuthorizePath,
				"--token-url", token, "--redirect-uri", zitadelRedirect}, web, loginClient, users,
			[]string{"--scope", "openid offline_access", "-P", "8", "--emit", emit, "--product", "zitadel"})}
	}
	return product.Table{
		Scenarios: map[string]product.Scenario{
			"discovery":                {Endpoint: issuer + "/.well-known/openid-configuration"},
			"client_credentials":       {Endpoint: token, Load: cc},
			"client_credentials_login": {Endpoint: token, Load: slices.Concat([]string{"--userinfo-url", issuer + "/oidc/v1/userinfo"}, cc)},
			"jwt_bearer": {Endpoint: token, Load: slices.Concat(product.Reuse, []string{"--scope", zitadelScope}), TTL: 3600,
				Pool: &product.Pool{Kind: "assertion", Mode: "reuse", Flow: "jwt-bearer", Args: []string{"--flow", "jwt-bearer",
					"--key-file", sum.M2M.KeyFile, "--aud", issuer, "--ttl", "1h", "-P", "8", "--product", "zitadel"}}},
			"introspect": {Endpoint: issuer + "/oauth/v2/introspect", TTL: 43200, Pool: login("access_token", "reuse"),
				Load:   slices.Concat([]string{"--client-auth", "assertion", "--client-assertion-pool", st.Path("pools", "client-assertions.pool")}, product.Reuse),
				Before: []string{"client-assertions"}},
			"auth_code": {Endpoint: issuer + sessionapi.AuthorizePath, Load: slices.Concat([]string{"--login", "session-api",
				"--token-url", token, "--admin-url", issuer, "--redirect-uri", zitadelRedirect}, web,
				[]string{"--scope", "openid offline_access"}, users, loginClient)},
			"refresh":  {Endpoint: token, Load: slices.Concat(web, product.Chain), TTL: 2592000, Pool: login("refresh_token", "chain")},
			"userinfo": {Endpoint: issuer + "/oidc/v1/userinfo", Load: product.Reuse, TTL: 43200, Pool: login("access_token", "reuse")},
		},
		Pools: map[string]product.Pool{"client-assertions": {Kind: "assertion", Mode: "reuse", Flow: "client-assertion",
			Args: []string{"--flow", "client-assertion", "--key-file", sum.APIApp.KeyFile, "--aud", issuer, "--ttl", "1h",
				"-n", "1000", "-P", "4", "--product", "zitadel"}, MaxAgeS: 1800}},
	}
}

// zitadelSetup: "provision zitadel" provisions through Zitadel's APIs, with
// the first instance's admin PAT (written by Zitadel at init into KEY_DIR),
// and waits until what it created is readable.
func zitadelSetup(st *product.State) []string {
	return []string{"--issuer", st.Get("ISSUER"), "--pat-file", st.Get("KEY_DIR") + "/zitadel-admin-sa.pat",
		"--out-dir", st.Path("secrets"), "--users", zitadelUsers, "--username", "bench-user%d",
		"--redirect-uri", zitadelRedirect, "--timeout", "300s"}
}

// zitadelConfig is zitadel.yaml of native mode, settings from
// docs/products/zitadel.md and Zitadel's defaults.yaml / steps.yaml
// (https://zitadel.com/docs/self-hosting/manage/configure). No secrets:
// the masterkey, the admin's password and the database password come from
// the environment.
func zitadelConfig(st *product.State) string {
	port := st.Get("PORT")
	return fmt.Sprintf(`# Generated by products/zitadel/adapter for one benchmark run.
Log:
  Level: warn
Port: %[1]s
ExternalDomain: localhost
ExternalPort: %[1]s
ExternalSecure: false
TLS:
  Enabled: false
ServicePing:
  Enabled: false
Database:
  postgres:
    Host: 127.0.0.1
    Port: %[2]s
    Database: %[3]s
    # Zitadel's default is 10 open / 5 idle; 25/25 like Hydra and Keycloak.
    MaxOpenConns: 25
    MaxIdleConns: 25
    # The shared cluster admits only its superuser on loopback (trust):
    # init finds that user and the database present and creates neither.
    User:
      Username: %[4]s
      SSL:
        Mode: disable
    Admin:
      Username: %[4]s
      SSL:
        Mode: disable
DefaultInstance:
  Features:
    LoginV2:
      Required: false
FirstInstance:
  MachineKeyPath: %[5]s/zitadel-admin-sa.json
  PatPath: %[5]s/zitadel-admin-sa.pat
  Org:
    Machine:
      Machine:
        Username: idpbench-admin-sa
        Name: idpbench admin
      MachineKey:
        Type: 1
      Pat:
        ExpirationDate: "2030-01-01T00:00:00Z"
`, port, st.PGPort(), zitadelDB, product.PGUser, st.Path("secrets"))
}

func zitadelPart(in product.Inputs) schema.Meta {
	start := "A: zitadel start-from-init --config zitadel.yaml --steps zitadel.yaml --masterkeyFromEnv --tlsMode disabled; B: zitadel start"
	if in.Compose() {
		start = "products/zitadel/compose.yml: start-from-init --masterkeyFromEnv --tlsMode disabled"
	}
	m := schema.Meta{
		Settings: map[string]string{
			"start":             start,
			"database_pool":     "MaxOpenConns 25, MaxIdleConns 25 (Zitadel default 10/5)",
			"external_domain":   "localhost, plain http (TLS disabled)",
			"login_v2_required": "false (no login container: logins go through the Session API)",
			"service_ping":      "off",
			"log_level":         "warn",
			"s2":                "client_credentials with a machine user secret (hashed per request)",
			"s2j":               "jwt-bearer grant with a machine user key, pre-signed assertion pool (exp 1 h)",
			"s3":                "introspection by an API app with private_key_jwt (client assertion pool)",
			"s4":                "Session API login: authorize with x-zitadel-login-client, session with user and password checks, auth request finalized, code exchange",
			"s5_pool_mode":      "chain",
		},
		ConfigSources: []schema.Link{
			{What: "Zitadel self-hosting: production setup", URL: "https://zitadel.com/docs/self-hosting/manage/production"},
			{What: "configuration (defaults.yaml, steps.yaml, ZITADEL_* variables)", URL: "https://zitadel.com/docs/self-hosting/manage/configure"},
			{What: "database settings", URL: "https://zitadel.com/docs/self-hosting/manage/database"},
			{What: "compose deployment", URL: "https://zitadel.com/docs/self-hosting/deploy/compose"},
			{What: "custom login UI with the OIDC standard (Session API flow)", URL: "https://zitadel.com/docs/guides/integrate/login-ui/oidc-standard"},
			{What: "JWT profile grant (machine users)", URL: "https://zitadel.com/docs/guides/integrate/service-users/private-key-jwt"},
		},
		Deviations: []schema.Note{
			{What: "plain http, TLS disabled", Why: "the other products run plain http on loopback too; TLS would measure the TLS stack"},
			{What: "MaxOpenConns/MaxIdleConns 25/25", Why: "the same recorded pool size as Hydra and Keycloak instead of Zitadel's 10/5"},
			{What: "log level warn", Why: "request logging would measure logging"},
		},
		Notes: []string{
			"Provisioning (provision zitadel) goes through Zitadel's management, admin and v2 APIs; a discovery smoke step must be clean before anything is measured (projections lag behind writes).",
			"S2j uses a pre-signed assertion pool; Zitadel's own benchmark signs one per iteration (the grant is the same; signing cost moves out of the driver).",
		},
	}
	if !in.Compose() {
		m.Deviations = append(m.Deviations, schema.Note{What: "native mode connects as the cluster superuser",
			Why: "the shared PostgreSQL admits only its superuser on loopback; Zitadel's init finds the user and database present and creates neither"})
	}
	return m
}
