package keycloak

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
)

// "provision keycloak" provisions a Keycloak server for idpbench through its
// admin REST API: a realm, a confidential client with an audience mapper and
// users sharing one password. It checks one request of each measured kind,
// writes the secrets to files and prints a JSON summary without secrets.

const keycloakHead = `Usage: provision keycloak --base-url URL --admin-password-file FILE --out-dir DIR [flags]

Provisions, as a master-realm admin (the bootstrap admin; its token is
renewed before it expires), through the admin REST API:
  realm --realm, enabled, accessTokenLifespan --access-token-lifespan
  confidential client --client-id (client_secret_basic; client_credentials,
    password and authorization_code grants; --redirect-uri) with an
    oidc-audience-mapper "bench-audience" (introspection by the client
    answers active:false without it)                               -> OUT/<client-id>
  --users users named --username, verified emails, one generated password
                                                                   -> OUT/users-password
then checks once: a client_credentials grant, its token's introspection
(active), a password grant of the first user with scope openid (a refresh
token) and userinfo with its access token. Secret files are 0600 and written
only when everything succeeded; secrets are alphanumeric (Keycloak
URL-decodes Basic credentials). stdout: a JSON summary
("idpbench.keycloak-setup/v1") with the names, ids and file names, no secret.
A failure names the call and its HTTP status; objects created before it stay
in Keycloak.

Flags:
`

const keycloakTail = `
Exit status: 0 ok, 1 runtime error (the product's API refused or did not answer), 2 usage
error, 130 interrupted.

Example (provision, then mint refresh tokens with the password grant):
  provision keycloak --base-url http://127.0.0.1:8080 --admin-password-file state/admin \
    --out-dir state/secrets --users 20 > state/keycloak-setup.json &&
  mintpool --flow password --token-url http://127.0.0.1:8080/realms/bench/protocol/openid-connect/token \
    --client-id bench-svc --client-secret-file state/secrets/bench-svc --client-auth basic \
    --username 'user%d' --users 20 --password-file state/secrets/users-password --scope openid \
    --emit refresh_token -n 256 -P 8 --product keycloak -o state/rt.pool
`

// provision is "provision keycloak": Setup with its flags.
func provision(ctx context.Context, args []string, e cli.Env) error {
	var cfg SetupConfig
	var passwordFile string
	fs := keycloakFlags(&cfg, &passwordFile)
	if err := (cli.Help{Tool: "provision", Head: keycloakHead, Tail: keycloakTail}).ParseSub(fs, args, e.Stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q (provision keycloak takes flags only)", fs.Arg(0))
	}
	var err error
	if cfg.AdminPassword, err = cli.ReadSecret("admin-password-file", passwordFile, "IDPBENCH_KEYCLOAK_ADMIN_PASSWORD"); err != nil {
		return cli.UsageError{Err: err}
	}
	cfg.Progress = cli.IsTerminal(e.Stderr)
	return Setup(ctx, cfg, e.Stdout, e.Stderr)
}

func keycloakFlags(c *SetupConfig, passwordFile *string) *pflag.FlagSet {
	fs := cli.NewFlagSet("keycloak")
	fs.StringVar(&c.BaseURL, "base-url", "", "Keycloak's root URL (admin API under /admin, realms under /realms), e.g. http://127.0.0.1:8080 (required)")
	fs.StringVar(&c.AdminUser, "admin-user", "admin", "master-realm admin user (the bootstrap admin)")
	fs.StringVar(passwordFile, "admin-password-file", "", "file holding the admin user's password (default: env IDPBENCH_KEYCLOAK_ADMIN_PASSWORD)")
	fs.StringVar(&c.OutDir, "out-dir", "", "existing directory for the secret files (required)")
	fs.StringVar(&c.Realm, "realm", "bench", "realm to create")
	fs.DurationVar(&c.AccessTokenLifespan, "access-token-lifespan", time.Hour, "the realm's access token lifespan, whole seconds (Keycloak's default: 5m)")
	fs.StringVar(&c.ClientID, "client-id", "bench-svc", "confidential client to create; also the name of its secret file")
	fs.StringVar(&c.RedirectURI, "redirect-uri", "http://127.0.0.1/cb", "the client's redirect URI (nothing needs to listen there)")
	fs.IntVar(&c.Users, "users", 20, "number of users")
	fs.StringVar(&c.Username, "username", "user%d", `user names; "%d" is replaced by 0..users-1`)
	fs.IntVarP(&c.Parallel, "parallel", "P", 4, "concurrent user creations")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", 30*time.Second, "timeout per HTTP request")
	return fs
}

// provisionCommand is "provision keycloak", the entry's Provision.
var provisionCommand = cli.Subcommand{Name: "keycloak", Summary: "provision Keycloak through its admin REST API: realm, client with audience mapper, users", Run: provision}
