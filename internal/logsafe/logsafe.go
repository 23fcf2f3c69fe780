// Package logsafe renders what a server sent, or a URL a request went to,
// for an error message: one printable line of bounded length, and no query,
// fragment or user info, which may carry codes, challenges or credentials.
package logsafe

import (
	"net/url"
	"strings"
	"unicode"
)

// Text keeps the first 300 printable characters of s on one line.
func Text(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// Redact replaces each secret in s by "[redacted]", should a server echo
// what it was sent; a secret shorter than 4 characters is left alone (it
// would match everywhere).
func Redact(s string, secrets ...string) string {
	for _, v := range secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// URL drops the query, the fragment and the user info.
func URL(u *url.URL) string {
	c := *u
	c.RawQuery, c.Fragment, c.User = "", "", nil
	return c.String()
}
