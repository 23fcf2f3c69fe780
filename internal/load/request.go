package load

import (
	"net/url"
	"strings"
)

// Request is one HTTP request in a form a Sender can put on the wire
// without building anything. A worker owns one Request and the scenario
// refills its buffers for every iteration, so steady state allocates nothing.
type Request struct {
	Method string
	URL    *url.URL // absolute target; the same pointer for every request of a step
	// Header is the header block in HTTP/1.1 wire form, "Key: value\r\n"
	// per line, Host first, without Content-Length (the Sender sets it from
	// Body) and without the blank line that ends the head.
	Header []byte
	Body   []byte // nil or empty: no body
}

// slot is what a template part holds.
type slot uint8

const (
	slotLiteral       slot = iota
	slotCred               // the pool credential, verbatim
	slotCredForm           // the pool credential, form-encoded
	slotAssertionForm      // the client assertion, form-encoded
)

type part struct {
	slot slot
	lit  string // slotLiteral only
}

// template is a request header block or body with holes for the
// credential and the client assertion, filled in by append.
type template []part

func (t template) append(b []byte, cred, assertion string) []byte {
	for _, p := range t {
		switch p.slot {
		case slotLiteral:
			b = append(b, p.lit...)
		case slotCred:
			b = append(b, cred...)
		case slotCredForm:
			b = appendFormEscape(b, cred)
		case slotAssertionForm:
			b = appendFormEscape(b, assertion)
		}
	}
	return b
}

// has reports whether the template holds slot s.
func (t template) has(s slot) bool {
	for _, p := range t {
		if p.slot == s {
			return true
		}
	}
	return false
}

// lit appends literal text, merging it into a literal before it.
func (t template) lit(s string) template {
	if n := len(t); n > 0 && t[n-1].slot == slotLiteral {
		t[n-1].lit += s
		return t
	}
	return append(t, part{lit: s})
}

func (t template) hole(s slot) template { return append(t, part{slot: s}) }

// text appends s with every Placeholder turned into the verbatim credential.
func (t template) text(s string) template {
	for {
		before, after, found := strings.Cut(s, Placeholder)
		t = t.lit(before)
		if !found {
			return t
		}
		t, s = t.hole(slotCred), after
	}
}

// form builds an application/x-www-form-urlencoded body field by field.
type form struct{ t template }

func (f *form) sep(key string) {
	if len(f.t) > 0 {
		f.t = f.t.lit("&")
	}
	f.t = f.t.lit(url.QueryEscape(key) + "=")
}

// set adds a fixed field.
func (f *form) set(key, value string) {
	f.sep(key)
	f.t = f.t.lit(url.QueryEscape(value))
}

// slot adds a field whose value is filled in per request.
func (f *form) slot(key string, s slot) {
	f.sep(key)
	f.t = f.t.hole(s)
}

// appendFormEscape appends s escaped exactly as url.QueryEscape does.
func appendFormEscape(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~':
			b = append(b, c)
		case c == ' ':
			b = append(b, '+')
		default:
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return b
}

// validHeaderValue reports whether s can stand in a header line as is: no
// control characters other than tab (a CR or LF would split the request).
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
