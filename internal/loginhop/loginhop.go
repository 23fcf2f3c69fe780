// Package loginhop is what the headless logins (internal/login/adminaccept,
// internal/login/formlogin, internal/login/sessionapi's Flow) share with the
// tools that send their requests (loadstep's iterations, mintpool's
// pools): a login builds each request (a hop) and judges its response; the
// caller sends it (Do) and turns a refusal (*Error) into its own terms:
// loadstep a request's error class, mintpool its error text.
// Authorization is the request the logins start with and where they end.
package loginhop

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Response is what a login reads of a response: its status, headers
// (Location) and whole body.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Check judges a response: nil when the login can go on, else an *Error.
type Check func(*Response) error

// Do sends req as hop (one of the login's own Hop values), without
// following a redirect, reads the whole response and returns check's
// verdict on it, or the transport error. req has no context: Do gives it
// one. Any error ends the login, which returns it unchanged.
type Do[H any] func(hop H, req *http.Request, check Check) error

// Error is a response the login cannot go on from.
type Error struct {
	Hop string // the hop's name in its login: "authorize", "submit", ...
	// Op names the request, never its query (which carries challenges,
	// session codes and authorization codes): "GET http://host/path".
	Op     string
	Status int
	// WrongStatus: the status is not what the hop wants. Otherwise the
	// status was right and the rest of the response was not (Detail says
	// what).
	WrongStatus bool
	// Want is what the hop wanted, named after a wrong status (WantRedirect,
	// WantPage); "" names nothing (an API call wanting a 2xx).
	Want string
	// Detail follows the status in the message (": ..."): what was wrong
	// with a response of the right status; after a wrong status, what the
	// server said when the login words it itself (Zitadel's error bodies,
	// its token redacted), else "" and the caller words the body.
	Detail string
}

// What a hop wants, as an Error names it after a wrong status.
const (
	WantRedirect = "a redirect"
	WantPage     = "a 2xx page"
)

func (e *Error) Error() string {
	if e.WrongStatus {
		return e.Request() + ": HTTP " + strconv.Itoa(e.Status) + e.Detail
	}
	return e.Op + e.Detail
}

// Request is the request as the error names it: Op, and after a wrong
// status what the hop wanted: " (want a redirect)".
func (e *Error) Request() string {
	if e.WrongStatus && e.Want != "" {
		return e.Op + " (want " + e.Want + ")"
	}
	return e.Op
}

// Detailf sets e's Detail and returns e.
func (e *Error) Detailf(format string, args ...any) *Error {
	e.Detail = fmt.Sprintf(format, args...)
	return e
}

// WrongStatus is err's *Error when it says the status was wrong, else nil.
func WrongStatus(err error) *Error {
	var e *Error
	if errors.As(err, &e) && e.WrongStatus {
		return e
	}
	return nil
}
