// Command mintpool mints a pool of credentials (access, refresh or ID tokens
// through the IdP's own API, or locally signed JWT assertions) for loadstep.
package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/login"
	"github.com/idpbench/idpbench/internal/mint"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usageHead = `Usage: mintpool --flow FLOW [flags]

Mints -n credentials through the IdP's own API (or signs JWT assertions
locally) and writes a pool file: one credential per line after a
"# idpbench-pool kind=... product=... flow=... minted=... expires=..." header,
mode 0600, written only when every credential was minted.
Secrets come from files or the environment, never from flags.

Flags:
`

const usageTail = `
Exit codes: 0 the pool written, 1 minting failed (no pool written), 2 usage
error, 130 interrupted.

Example (refresh-token pool from Keycloak, consumed by a refresh ladder step):
  mintpool --flow password --issuer http://127.0.0.1:8080/realms/bench \
    --client-id bench-svc --client-secret-file secret.txt --username 'u%d' --users 50 \
    --password-file pw.txt --emit refresh_token -n 500 -P 8 --product keycloak -o rt.pool &&
  loadstep --url http://127.0.0.1:8080/realms/bench/protocol/openid-connect/token \
    --scenario refresh --pool rt.pool --pool-mode consume -c 8 -o refresh-c8.json

Example (access tokens through the reference OP's login page, as its adapter mints them):
  mintpool --flow form-page --issuer http://localhost:9998/ --client-id web \
    --client-secret-file web.secret --redirect-uri http://localhost:9999/auth/callback \
    --username test-user@localhost --password-file user.pw -n 256 -P 8 --product refop -o at.pool
`

// flags are the command line: the stage config plus what main resolves itself.
type flags struct {
	cfg              mint.Config
	clientSecretFile string
	passwordFile     string
	loginPATFile     string
	loginFields      []string
	version          bool
}

func newFlagSet(f *flags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("mintpool", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	c := &f.cfg
	fs.StringVar(&c.Flow, "flow", "", "client_credentials|password|admin-accept|session-api|form|form-page|jwt-bearer|client-assertion (required)")
	fs.StringVar(&c.TokenURL, "token-url", "", "token endpoint URL (default: discovered from --issuer)")
	fs.StringVar(&c.Issuer, "issuer", "", "issuer URL; endpoints are discovered from URL/.well-known/openid-configuration")
	fs.StringVar(&c.AuthURL, "auth-url", "", "authorization endpoint URL for the login flows (default: discovered; admin-accept: else <issuer>/oauth2/auth, session-api: else <issuer>/oauth/v2/authorize)")
	fs.StringVar(&c.AdminURL, "admin-url", "", "Hydra admin base URL for admin-accept, e.g. http://127.0.0.1:4445")
	fs.StringVar(&c.RedirectURI, "redirect-uri", "http://127.0.0.1/cb", "registered redirect URI for the login flows (admin-accept, session-api, form, form-page)")
	fs.StringVar(&c.ClientID, "client-id", "", "OAuth client id")
	fs.StringVar(&f.clientSecretFile, "client-secret-file", "", "file holding the client secret (default: env IDPBENCH_CLIENT_SECRET)")
	fs.StringVar(&c.ClientAuth, "client-auth", "basic", "client authentication at the token endpoint: basic|post")
	fs.StringVar(&c.Scope, "scope", "", `space-separated scopes (default: "openid" for password, "openid offline_access" for the login flows, none for client_credentials)`)
	fs.StringVar(&c.Username, "username", "", `password, session-api, form and form-page flows: user (login name); "%d" is replaced by i mod --users`)
	fs.IntVar(&c.Users, "users", 1, `number of distinct users behind "%d" in --username/--subject`)
	fs.StringVar(&f.passwordFile, "password-file", "", "file holding the user password (default: env IDPBENCH_PASSWORD)")
	fs.StringVar(&c.LoginForm.UserField, "login-user-field", "", "form, form-page: the login form's user name field (default: the page's own, the text or email input before its password input)")
	fs.StringVar(&c.LoginForm.PasswordField, "login-password-field", "", "form, form-page: the login form's password field (default: the page's own password input)")
	fs.StringArrayVar(&f.loginFields, "login-field", nil, "form, form-page: NAME=VALUE sent with the user's name and password, repeatable")
	fs.BoolVar(&c.LoginForm.Consent, "login-consent", false, "form, form-page: answer a consent form where the redirect to the client is wanted (default: such a page fails the login)")
	fs.StringVar(&c.LoginClient, "login-client", "", "session-api: user id of the machine user with IAM_LOGIN_CLIENT (sent as x-zitadel-login-client)")
	fs.StringVar(&f.loginPATFile, "login-client-pat-file", "", "session-api: file holding the login client's personal access token (default: env IDPBENCH_LOGIN_CLIENT_PAT)")
	fs.StringVar(&c.Subject, "subject", "user%d", `admin-accept subject; "%d" as in --username`)
	fs.StringVar(&c.KeyFile, "key-file", "", `jwt flows: Zitadel JSON key file {"type","keyId","key","userId"|"clientId"} or PEM RSA private key`)
	fs.StringVar(&c.KeyID, "kid", "", "jwt flows: key id for the JWT header (default: the key file's keyId)")
	fs.StringVar(&c.JWTIss, "iss", "", "jwt flows: iss claim (default: userId for jwt-bearer, clientId for client-assertion)")
	fs.StringVar(&c.JWTSub, "sub", "", "jwt flows: sub claim (default: the iss claim)")
	fs.StringVar(&c.Audience, "aud", "", "jwt flows: aud claim, e.g. the issuer or token endpoint; several audiences comma-separated (required for jwt flows)")
	fs.DurationVar(&c.TTL, "ttl", time.Hour, "jwt flows: assertion lifetime (exp = now + ttl)")
	fs.IntVarP(&c.N, "count", "n", 100, "number of credentials to mint")
	fs.IntVarP(&c.Parallel, "parallel", "P", 4, "concurrent workers, each with its own HTTP connection")
	fs.StringVar(&c.Emit, "emit", mint.EmitAccessToken, "token written to the pool: access_token|refresh_token|id_token (ignored by jwt flows)")
	fs.IntVar(&c.MaxFailures, "max-failures", 10, "abort after this many consecutive failed attempts")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Second, "timeout per HTTP request")
	fs.StringVar(&c.Product, "product", "unknown", "product name recorded in the pool header")
	fs.StringVarP(&c.Output, "output", "o", "-", `pool file ("-" = stdout)`)
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	return fs
}

func run(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var f flags
	fs := newFlagSet(&f)
	if code, done := (cli.Help{Tool: "mintpool", Head: usageHead, Tail: usageTail}).Parse(fs, args, &f.version, stdout, stderr); done {
		return code
	}
	if err := f.resolve(fs); err != nil {
		return cli.Fail(stderr, "mintpool", err)
	}
	f.cfg.Progress = cli.IsTerminal(stderr)
	return cli.Fail(stderr, "mintpool", mint.Run(ctx, f.cfg, stdout, stderr))
}

// resolve reads the secrets, applies flow-dependent defaults and validates.
func (f *flags) resolve(fs *pflag.FlagSet) error {
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q (mintpool takes flags only)", fs.Arg(0))
	}
	if !fs.Changed("scope") {
		f.cfg.Scope = mint.DefaultScope(f.cfg.Flow)
	}
	for _, s := range f.loginFields {
		kv, err := login.ParseField(s)
		if err != nil {
			return cli.Usagef("--login-field: %v", err)
		}
		f.cfg.LoginForm.Fields = append(f.cfg.LoginForm.Fields, kv)
	}
	var err error
	if f.cfg.ClientSecret, err = cli.ReadSecret("client-secret-file", f.clientSecretFile, "IDPBENCH_CLIENT_SECRET"); err != nil {
		return cli.UsageError{Err: err}
	}
	if f.cfg.Password, err = cli.ReadSecret("password-file", f.passwordFile, "IDPBENCH_PASSWORD"); err != nil {
		return cli.UsageError{Err: err}
	}
	if f.cfg.LoginClientPAT, err = cli.ReadSecret("login-client-pat-file", f.loginPATFile, "IDPBENCH_LOGIN_CLIENT_PAT"); err != nil {
		return cli.UsageError{Err: err}
	}
	return f.cfg.Validate()
}

// fail prints err once as "mintpool: ..." and returns its exit code.
