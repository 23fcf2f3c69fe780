package zitadel

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/products/zitadel/zitadelapi"
)

// "provision zitadel" provisions a Zitadel instance for idpbench through its
// APIs: a project, a private_key_jwt API app and its key, machine users for
// the jwt-bearer and client_credentials grants, a login client for the
// Session API login, an OIDC web app and human users. It waits until
// Zitadel's projections have caught up, writes the secrets to files and
// prints a JSON summary without secrets.

const zitadelHead = `Usage: provision zitadel --issuer URL --pat-file FILE --out-dir DIR [flags]

Provisions, with an IAM_OWNER personal access token, in the token owner's
organization (or --org-id):
  project <prefix>; API app <prefix>-api (private_key_jwt) + key   -> OUT/app-key.json
  machine user <prefix>-m2m + JSON key (jwt-bearer grant)          -> OUT/m2m-key.json
  machine user <prefix>-cc + client secret (client_credentials)    -> OUT/cc-secret
  machine user <prefix>-login-client, IAM_LOGIN_CLIENT, + PAT      -> OUT/login-client.pat
  OIDC web app <prefix>-web (code + refresh token, Basic auth)     -> OUT/web-secret
  --users human users named --username, one generated password    -> OUT/user-password
then waits until discovery is clean and every object is readable (Zitadel's
projections lag behind writes). Secret files are 0600 and written only when
everything succeeded. stdout: a JSON summary ("idpbench.zitadel-setup/v1")
with the ids and file names, no secret. A failure names the call; objects
created before it stay in Zitadel (re-run with another --prefix).

Flags:
`

const zitadelTail = `
Exit status: 0 ok, 1 runtime error (the product's API refused or did not answer), 2 usage
error, 130 interrupted.

Example (provision, then mint refresh tokens through the Session API login):
  provision zitadel --issuer http://localhost:8080 --pat-file state/admin.pat \
    --out-dir state/secrets --users 100 --username 'bench-user%d' \
    --redirect-uri http://localhost:9999/cb > state/zitadel-setup.json &&
  mintpool --flow session-api --issuer http://localhost:8080 \
    --login-client "$(jq -r .login_client.user_id state/zitadel-setup.json)" \
    --login-client-pat-file state/secrets/login-client.pat \
    --client-id "$(jq -r .web.client_id state/zitadel-setup.json)" \
    --client-secret-file state/secrets/web-secret --redirect-uri http://localhost:9999/cb \
    --username "$(jq -r .users.login_name_pattern state/zitadel-setup.json)" --users 100 \
    --password-file state/secrets/user-password --emit refresh_token -n 500 -P 8 \
    --product zitadel -o state/rt.pool
`

// provision is "provision zitadel": zitadelapi.Setup with its flags.
func provision(ctx context.Context, args []string, e cli.Env) error {
	var cfg zitadelapi.SetupConfig
	var patFile string
	fs := zitadelFlags(&cfg, &patFile)
	if err := (cli.Help{Tool: "provision", Head: zitadelHead, Tail: zitadelTail}).ParseSub(fs, args, e.Stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q (provision zitadel takes flags only)", fs.Arg(0))
	}
	var err error
	if cfg.PAT, err = cli.ReadSecret("pat-file", patFile, "IDPBENCH_ZITADEL_PAT"); err != nil {
		return cli.UsageError{Err: err}
	}
	cfg.Progress = cli.IsTerminal(e.Stderr)
	return zitadelapi.Setup(ctx, cfg, e.Stdout, e.Stderr)
}

func zitadelFlags(c *zitadelapi.SetupConfig, patFile *string) *pflag.FlagSet {
	fs := cli.NewFlagSet("zitadel")
	fs.StringVar(&c.Issuer, "issuer", "", "Zitadel's external URL, exactly as configured (ExternalDomain:ExternalPort), e.g. http://localhost:8080 (required)")
	fs.StringVar(patFile, "pat-file", "", "file holding an IAM_OWNER personal access token (default: env IDPBENCH_ZITADEL_PAT)")
	fs.StringVar(&c.OutDir, "out-dir", "", "existing directory for the secret files (required)")
	fs.StringVar(&c.OrgID, "org-id", "", "organization to provision in (default: the token owner's)")
	fs.StringVar(&c.Prefix, "prefix", "idpbench", "name of the project and prefix of the apps' and machine users' names")
	fs.IntVar(&c.Users, "users", 100, "number of human users")
	fs.StringVar(&c.Username, "username", "bench-user%d", `human user names; "%d" is replaced by 0..users-1`)
	fs.StringVar(&c.RedirectURI, "redirect-uri", "http://localhost:9999/cb", "redirect URI of the OIDC web app (nothing needs to listen there)")
	fs.BoolVar(&c.JWTAccessTokens, "jwt-access-tokens", false, "machine users and the web app get JWT access tokens (default: opaque bearer tokens)")
	fs.IntVarP(&c.Parallel, "parallel", "P", 4, "concurrent human-user creations")
	fs.DurationVar(&c.Timeout, "timeout", 300*time.Second, "how long to wait until everything created is readable")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", 30*time.Second, "timeout per HTTP request")
	return fs
}

// provisionCommand is "provision zitadel", the entry's Provision.
var provisionCommand = cli.Subcommand{Name: "zitadel", Summary: "provision Zitadel through its APIs: project, apps, machine users, login client, users", Run: provision}
