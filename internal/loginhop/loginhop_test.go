package loginhop

import (
	"errors"
	"fmt"
	"testing"
)

// TestError: the words mintpool prints for each kind of refusal, and what
// loadstep classes by.
func TestError(t *testing.T) {
	const op = "GET http://op/auth"
	tests := []struct {
		name        string
		err         *Error
		msg, req    string
		wrongStatus bool
	}{
		{"wrong status on a redirect hop", &Error{Op: op, Status: 200, WrongStatus: true, Want: WantRedirect},
			op + " (want a redirect): HTTP 200", op + " (want a redirect)", true},
		{"wrong status on a page hop", &Error{Op: op, Status: 302, WrongStatus: true, Want: WantPage},
			op + " (want a 2xx page): HTTP 302", op + " (want a 2xx page)", true},
		{"wrong status, nothing named", &Error{Op: "PUT http://admin/accept", Status: 404, WrongStatus: true},
			"PUT http://admin/accept: HTTP 404", "PUT http://admin/accept", true},
		{"wrong status, the server's words", &Error{Op: "CreateSession (POST /v2/sessions)", Status: 400, WrongStatus: true,
			Detail: ": Errors.User.Password.Invalid (code 3)"},
			"CreateSession (POST /v2/sessions): HTTP 400: Errors.User.Password.Invalid (code 3)", "CreateSession (POST /v2/sessions)", true},
		{"right status, wrong rest", (&Error{Op: op, Status: 302, Want: WantRedirect}).Detailf(": HTTP %d redirect has no %s", 302, "code"),
			op + ": HTTP 302 redirect has no code", op, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.msg {
				t.Errorf("Error() %q, want %q", got, tt.msg)
			}
			if got := tt.err.Request(); got != tt.req {
				t.Errorf("Request() %q, want %q", got, tt.req)
			}
			wrapped := fmt.Errorf("flow: %w", tt.err)
			if got := WrongStatus(wrapped); (got == tt.err) != tt.wrongStatus || (got != nil) != tt.wrongStatus {
				t.Errorf("WrongStatus(%v) = %v, want the error: %v", wrapped, got, tt.wrongStatus)
			}
		})
	}
	if WrongStatus(nil) != nil || WrongStatus(errors.New("connection refused")) != nil {
		t.Error("WrongStatus of nil or a transport error is not nil")
	}
}
