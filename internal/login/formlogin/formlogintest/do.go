package formlogintest

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"time"

	"github.com/idpbench/idpbench/internal/loginhop"
)

// Do sends one login's hops as a browser does: with a cookie jar of its
// own, following no redirect, reading the whole body; 5 s a request.
func Do[H any](ctx context.Context) loginhop.Do[H] {
	jar, _ := cookiejar.New(nil) // never fails without options
	hc := &http.Client{Jar: jar, Timeout: 5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return func(_ H, req *http.Request, check loginhop.Check) error {
		resp, err := hc.Do(req.WithContext(ctx))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		return check(&loginhop.Response{Status: resp.StatusCode, Header: resp.Header, Body: body})
	}
}
