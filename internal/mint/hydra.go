package mint

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"time"

	"github.com/idpbench/idpbench/internal/hydralogin"
	"github.com/idpbench/idpbench/internal/loginhop"
)

// hydraFlow is Ory Hydra's headless login/consent flow (products/hydra.md;
// internal/hydralogin, which loadstep's --login hydra shares), then the
// code exchange with client auth. Each login has its own cookie jar:
// Hydra ties the challenges to CSRF cookies, and a missing cookie shows
// as error=request_forbidden in the callback's redirect.
type hydraFlow struct {
	login    *hydralogin.Flow
	redirect string
	tokenURL string
	auth     clientAuth
	subject  string
	users    int
	emit     string
}

func newHydraLogin(cfg *Config, tokenURL, authURL string) (*hydraFlow, error) {
	login, err := hydralogin.New(hydralogin.Client{AuthURL: authURL, AdminURL: cfg.AdminURL,
		ClientID: cfg.ClientID, RedirectURI: cfg.RedirectURI, Scope: cfg.Scope})
	if err != nil {
		return nil, err
	}
	return &hydraFlow{
		login:    login,
		redirect: cfg.RedirectURI,
		tokenURL: tokenURL,
		auth:     newClientAuth(cfg.ClientID, cfg.ClientSecret, cfg.ClientAuth),
		subject:  cfg.Subject,
		users:    cfg.Users,
		emit:     cfg.Emit,
	}, nil
}

func (f *hydraFlow) mint(ctx context.Context, w *worker, i int) (credential, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return credential{}, err
	}
	hc := *w.hc // shares the worker's transport (keep-alive), own cookie jar
	hc.Jar = jar
	callback, err := f.login.Login(hydraDo(ctx, w, &hc), perUser(f.subject, i, f.users))
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
		return credential{}, fmt.Errorf("hydra-login: code exchange: %w", err)
	}
	return tr.pick(f.emit, time.Now())
}

// hydraDo sends the login's requests with hc, and words a failure as
// mintpool's errors do: a wrong status as an HTTPError with the server's
// OAuth error, if any.
func hydraDo(ctx context.Context, w *worker, hc *http.Client) loginhop.Do[hydralogin.Hop] {
	return func(_ hydralogin.Hop, req *http.Request, check loginhop.Check) error {
		req = req.WithContext(ctx)
		resp, err := w.do(hc, req)
		if err != nil {
			return fmt.Errorf("hydra-login: %w", err)
		}
		err = check(&loginhop.Response{Status: resp.StatusCode, Header: resp.Header, Body: w.buf.Bytes()})
		if err == nil {
			return nil
		}
		if e := loginhop.WrongStatus(err); e != nil {
			return withOp(newHTTPError(req, e.Status, w.buf.Bytes()), "hydra-login: "+e.Request())
		}
		return fmt.Errorf("hydra-login: %w", err)
	}
}

func withOp(e *HTTPError, op string) *HTTPError {
	e.Op = op
	return e
}
