// Package httpprobe asks a URL for its HTTP status as the readiness checks
// do (coldstart's ready URL, runstate's health and wait-http): one GET on a
// fresh connection, redirects not followed, no proxy (every target is on
// this machine), the body read (at most 64 KiB) and dropped.
package httpprobe

import (
	"context"
	"io"
	"net/http"
	"time"
)

// Client is the client of a probe: no proxy, no kept connections, no
// redirects followed.
func Client() *http.Client {
	return &http.Client{
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Status is the status of one GET of url by c (nil: Client()), bounded by
// timeout; the error says why no response came.
func Status(ctx context.Context, c *http.Client, url string, timeout time.Duration) (int, error) {
	if c == nil {
		c = Client()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}
