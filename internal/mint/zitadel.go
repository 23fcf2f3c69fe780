package mint

import "github.com/idpbench/idpbench/internal/cli"

// session-api: human users logged in through Zitadel's Session API, as a
// custom login UI does it (internal/login/sessionapi, which loadstep's
// --login session-api shares; docs/products/zitadel.md), then the code
// exchange with client_secret_basic. The session and finalize calls
// authenticate with the login client's PAT; the login client is a machine
// user with IAM_LOGIN_CLIENT, named by its user id in the authorization
// request's header. The Session API is below the issuer.

// validateZitadelLogin checks what the session-api flow needs beyond the
// token endpoint client.
func (c *Config) validateZitadelLogin() error {
	switch {
	case c.Issuer == "":
		return cli.Usagef("--issuer: required for flow session-api (the base of Zitadel's v2 API)")
	case c.LoginClient == "":
		return cli.Usagef("--login-client: required for flow session-api (user id of the IAM_LOGIN_CLIENT machine user)")
	case c.LoginClientPAT == "":
		return cli.Usagef("--login-client-pat-file (or env IDPBENCH_LOGIN_CLIENT_PAT): required for flow session-api")
	case c.Username == "":
		return cli.Usagef("--username: required for flow session-api")
	case c.Password == "":
		return cli.Usagef("--password-file (or env IDPBENCH_PASSWORD): required for flow session-api")
	case c.ClientAuth != "basic":
		return cli.Usagef("--client-auth: flow session-api uses basic (the web app's auth method), got %q", c.ClientAuth)
	}
	return nil
}
