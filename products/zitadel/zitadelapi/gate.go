package zitadelapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Zitadel writes events first and builds its read models (projections)
// afterwards, so an object answered by a create call may be unreadable for a
// while: reads answer 404, and load started too early meets a storm of
// errors. The gate polls each check until it passes.

// Check is one readability probe; it returns nil once the object is readable.
type Check struct {
	Name string // what is probed, for the error message: "m2m user 2913..."
	Fn   func(ctx context.Context) error
	// RetryUnauthorized also retries HTTP 401: a token that is not yet
	// readable is refused as unauthenticated.
	RetryUnauthorized bool
}

// Gate is a set of checks with a common deadline.
type Gate struct {
	Checks   []Check
	Timeout  time.Duration // for all checks together
	Interval time.Duration // between two attempts of one check
}

// Wait runs the checks in order, retrying each until it passes. An error
// that cannot be a projection lag (401, 403, 400) fails at once; otherwise,
// at the deadline, Wait fails naming the check and its last error.
func (g Gate) Wait(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, g.Timeout)
	defer cancel()
	for _, c := range g.Checks {
		if err := g.poll(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

func (g Gate) poll(ctx context.Context, c Check) error {
	var last error
	for attempt := 1; ; attempt++ {
		err := c.Fn(ctx)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled):
			return fmt.Errorf("readability gate: %s: %w", c.Name, context.Canceled)
		case !retryable(err) && !(c.RetryUnauthorized && status(err) == http.StatusUnauthorized):
			return fmt.Errorf("readability gate: %s: %w", c.Name, err)
		}
		if ctx.Err() == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("readability gate: %s not readable within %s (%d attempts); last error: %w", c.Name, g.Timeout, attempt, orDeadline(last))
			}
			return fmt.Errorf("readability gate: %s: %w", c.Name, ctx.Err())
		case <-time.After(g.Interval):
		}
	}
}

func orDeadline(err error) error {
	if err == nil {
		return context.DeadlineExceeded
	}
	return err
}

// retryable is true for what a lagging projection or a starting server
// answers: 404, 412 (Zitadel's /debug/ready while the database is not),
// 429, 5xx, transport errors and unexpected bodies.
func retryable(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return true
	}
	switch {
	case ae.Status == http.StatusNotFound, ae.Status == http.StatusPreconditionFailed,
		ae.Status == http.StatusTooManyRequests, ae.Status >= 500:
		return true
	}
	return false
}

func status(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// Discovery checks, without a token, that the discovery document answers 200 and names
// issuer as its issuer: Zitadel only answers for its configured external
// URL, and JWT audiences must equal that issuer.
func (c *Client) Discovery(ctx context.Context, issuer string) error {
	var doc struct {
		Issuer string `json:"issuer"`
	}
	const path = "/.well-known/openid-configuration"
	if err := c.WithToken("").call(ctx, "Discovery", "GET", path, unscoped, nil, &doc); err != nil {
		return err
	}
	if strings.TrimRight(doc.Issuer, "/") != strings.TrimRight(issuer, "/") {
		return &APIError{Call: "Discovery (GET " + path + ")", Status: http.StatusOK,
			Message: fmt.Sprintf("issuer is %q, want %q (set Zitadel's ExternalDomain/ExternalPort/ExternalSecure to match)", doc.Issuer, issuer)}
	}
	return nil
}
