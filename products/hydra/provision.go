package hydra

import (
	"context"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
)

// "provision hydra" creates Hydra's one client for idpbench through the
// admin API (products/hydra).

const hydraHead = `Usage: provision hydra --admin-url URL --issuer URL --out-dir DIR [flags]

Creates, through Ory Hydra's admin API (POST /admin/clients), the client
every scenario uses: --client-id, client_secret_basic, grants
client_credentials, authorization_code and refresh_token, scope "openid
offline_access", redirect URI --redirect-uri (the headless login's callback),
with a generated secret. Then checks it once with a client_credentials grant
at the issuer's oauth2/token, and only then writes the secret, 0600, to
OUT/<client-id>. stdout: a JSON summary ("idpbench.hydra-setup/v1") with the
names and the file, never the secret. A failure names the call and its HTTP
status; a client created before a failed check stays in Hydra.

Flags:
`

const hydraTail = `
Exit status: 0 ok, 1 runtime error (the product's API refused or did not answer), 2 usage
error, 130 interrupted.

Example:
  provision hydra --admin-url http://127.0.0.1:4445 --issuer http://127.0.0.1:4444/ \
    --out-dir state/secrets --client-id bench > state/hydra-setup.json
`

// provision is "provision hydra": Setup with its flags.
func provision(ctx context.Context, args []string, e cli.Env) error {
	var c SetupConfig
	fs := cli.NewFlagSet("hydra")
	fs.StringVar(&c.AdminURL, "admin-url", "", "Hydra's admin API root, e.g. http://127.0.0.1:4445 (required)")
	fs.StringVar(&c.Issuer, "issuer", "", "Hydra's public issuer, e.g. http://127.0.0.1:4444/ (required)")
	fs.StringVar(&c.OutDir, "out-dir", "", "existing directory for the secret file (required)")
	fs.StringVar(&c.ClientID, "client-id", "bench", "the client to create; also the name of its secret file")
	fs.StringVar(&c.RedirectURI, "redirect-uri", "http://127.0.0.1/cb", "the client's redirect URI (nothing needs to listen there)")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", 30*time.Second, "timeout per HTTP request")
	if err := (cli.Help{Tool: "provision", Head: hydraHead, Tail: hydraTail}).ParseSub(fs, args, e.Stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q (provision hydra takes flags only)", fs.Arg(0))
	}
	return Setup(ctx, c, e.Stdout, e.Stderr)
}

// provisionCommand is "provision hydra", the entry's Provision.
var provisionCommand = cli.Subcommand{Name: "hydra", Summary: "provision Ory Hydra through its admin API: the client every scenario uses", Run: provision}
