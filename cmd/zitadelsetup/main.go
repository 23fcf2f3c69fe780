// Command zitadelsetup provisions a Zitadel instance for idpbench through
// its APIs: a project, a private_key_jwt API app and its key, machine users
// for the jwt-bearer and client_credentials grants, a login client for the
// Session API login, an OIDC web app and human users. It waits until
// Zitadel's projections have caught up, writes the secrets to files and
// prints a JSON summary without secrets.
package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/zitadel"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usageHead = `Usage: zitadelsetup --issuer URL --pat-file FILE --out-dir DIR [flags]

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

const usageTail = `
Example (provision, then mint refresh tokens through the Session API login):
  zitadelsetup --issuer http://localhost:8080 --pat-file state/admin.pat \
    --out-dir state/secrets --users 100 --username 'bench-user%d' \
    --redirect-uri http://localhost:9999/cb > state/zitadel-setup.json &&
  mintpool --flow zitadel-login --issuer http://localhost:8080 \
    --login-client "$(jq -r .login_client.user_id state/zitadel-setup.json)" \
    --login-client-pat-file state/secrets/login-client.pat \
    --client-id "$(jq -r .web.client_id state/zitadel-setup.json)" \
    --client-secret-file state/secrets/web-secret --redirect-uri http://localhost:9999/cb \
    --username "$(jq -r .users.login_name_pattern state/zitadel-setup.json)" --users 100 \
    --password-file state/secrets/user-password --emit refresh_token -n 500 -P 8 \
    --product zitadel -o state/rt.pool
`

type flags struct {
	cfg     zitadel.SetupConfig
	patFile string
	version bool
}

func newFlagSet(f *flags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("zitadelsetup", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	c := &f.cfg
	fs.StringVar(&c.Issuer, "issuer", "", "Zitadel's external URL, exactly as configured (ExternalDomain:ExternalPort), e.g. http://localhost:8080 (required)")
	fs.StringVar(&f.patFile, "pat-file", "", "file holding an IAM_OWNER personal access token (default: env IDPBENCH_ZITADEL_PAT)")
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
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	return fs
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f flags
	fs := newFlagSet(&f)
	if code, done := (cli.Help{Tool: "zitadelsetup", Head: usageHead, Tail: usageTail}).Parse(fs, args, &f.version, stdout, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		return cli.Fail(stderr, "zitadelsetup", cli.Usagef("unexpected argument %q (zitadelsetup takes flags only)", fs.Arg(0)))
	}
	var err error
	if f.cfg.PAT, err = cli.ReadSecret("pat-file", f.patFile, "IDPBENCH_ZITADEL_PAT"); err != nil {
		return cli.Fail(stderr, "zitadelsetup", cli.UsageError{Err: err})
	}
	f.cfg.Progress = cli.IsTerminal(stderr)
	return cli.Fail(stderr, "zitadelsetup", zitadel.Setup(ctx, f.cfg, stdout, stderr))
}
