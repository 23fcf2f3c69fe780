package mint

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"time"

	"github.com/idpbench/idpbench/internal/formlogin"
	"github.com/idpbench/idpbench/internal/loginhop"
)

// formFlow is refop-login: a login through the reference OP's HTML login
// page behind a redirect, then a callback hop (internal/formlogin, which
// loadstep's --login refop shares), then the code exchange with client
// auth. Each login has its own cookie jar.
type formFlow struct {
	name     string // the flow's name, in its errors
	login    *formlogin.Flow
	redirect string
	tokenURL string
	auth     clientAuth
	username string
	password string
	users    int
	emit     string
}

func newFormLogin(cfg *Config, tokenURL, authURL string) (*formFlow, error) {
	login, err := formlogin.New(formlogin.Client{AuthURL: authURL, ClientID: cfg.ClientID,
		RedirectURI: cfg.RedirectURI, Scope: cfg.Scope, PageHop: true})
	if err != nil {
		return nil, err
	}
	return &formFlow{
		name:     cfg.Flow,
		login:    login,
		redirect: cfg.RedirectURI,
		tokenURL: tokenURL,
		auth:     newClientAuth(cfg.ClientID, cfg.ClientSecret, cfg.ClientAuth),
		username: cfg.Username,
		password: cfg.Password,
		users:    cfg.Users,
		emit:     cfg.Emit,
	}, nil
}

func (f *formFlow) mint(ctx context.Context, w *worker, i int) (credential, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return credential{}, err
	}
	hc := *w.hc // shares the worker's transport (keep-alive), own cookie jar
	hc.Jar = jar
	callback, err := f.login.Login(f.do(ctx, w, &hc), perUser(f.username, i, f.users), f.password)
	if err != nil {
		return credential{}, err
	}
	form := url.Values{
		"grant_type":   {"authorization_code"},
		"code":         {callback.Query().Get("code")},
		"redirect_uri": {f.redirect},
	}
	tr, err := w.postToken(ctx, w.hc, f.tokenURL, f.auth.encode(form), f.auth)
	if err != nil {
		return credential{}, fmt.Errorf("%s: code exchange: %w", f.name, err)
	}
	return tr.pick(f.emit, time.Now())
}

// do sends the login's requests with hc, and words a failure as
// mintpool's errors do: a wrong status as an HTTPError with the server's
// OAuth error, if any (a wrong password: the form again, HTTP 200 where a
// redirect was wanted).
func (f *formFlow) do(ctx context.Context, w *worker, hc *http.Client) loginhop.Do[formlogin.Hop] {
	return func(_ formlogin.Hop, req *http.Request, check loginhop.Check) error {
		req = req.WithContext(ctx)
		resp, err := w.do(hc, req)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		err = check(&loginhop.Response{Status: resp.StatusCode, Header: resp.Header, Body: w.buf.Bytes()})
		if err == nil {
			return nil
		}
		if e := loginhop.WrongStatus(err); e != nil {
			return withOp(newHTTPError(req, e.Status, w.buf.Bytes()), f.name+": "+e.Request())
		}
		return fmt.Errorf("%s: %w", f.name, err)
	}
}
