package formlogin

import (
	"bytes"
	"html"
	"net/url"
	"strings"
)

// Form is the first POST form of a login page.
type Form struct {
	Action *url.URL    // absolute: resolved against the page URL
	Hidden [][2]string // name, value of each hidden input, in page order
}

// ParseForm finds the first <form method="post"> of page (fetched from
// base) and returns its action and hidden inputs; nil when there is none.
// It reads tags, not a DOM: enough for the login pages of the products
// (Keycloak's login theme, the reference OP's template), whose attribute
// values are quoted and HTML-escaped (&amp; in Keycloak's action URL).
func ParseForm(page []byte, base *url.URL) *Form {
	rest := page
	for {
		attrs, after, ok := nextTag(rest, "form")
		if !ok {
			return nil
		}
		rest = after
		if !strings.EqualFold(attrs["method"], "post") {
			continue
		}
		action, err := url.Parse(attrs["action"]) // "" = the page itself
		if err != nil {
			return nil
		}
		end := bytes.Index(asciiLower(rest), []byte("</form"))
		if end < 0 {
			end = len(rest)
		}
		return &Form{Action: base.ResolveReference(action), Hidden: hiddenInputs(rest[:end])}
	}
}

// hiddenInputs returns the name and value of each <input type="hidden">.
func hiddenInputs(form []byte) [][2]string {
	var out [][2]string
	for {
		attrs, after, ok := nextTag(form, "input")
		if !ok {
			return out
		}
		form = after
		if strings.EqualFold(attrs["type"], "hidden") && attrs["name"] != "" {
			out = append(out, [2]string{attrs["name"], attrs["value"]})
		}
	}
}

// nextTag finds the next <name ...> start tag in b and returns its
// attributes (names lower-cased, values unescaped) and what follows it.
func nextTag(b []byte, name string) (map[string]string, []byte, bool) {
	lower := asciiLower(b)
	open := []byte("<" + name)
	for from := 0; ; {
		i := bytes.Index(lower[from:], open)
		if i < 0 {
			return nil, nil, false
		}
		i += from + len(open)
		if i < len(b) && !isSpace(b[i]) && b[i] != '>' && b[i] != '/' {
			from = i // a longer tag name (<formula>)
			continue
		}
		attrs, end := parseAttrs(b, i)
		return attrs, b[end:], true
	}
}

// asciiLower lower-cases the ASCII letters of b and keeps every other byte,
// so that an index into the result is an index into b (bytes.ToLower
// changes the length of invalid UTF-8 and of some runes: a page with them
// would put the indexes past the end). Tag and attribute names are ASCII.
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// parseAttrs reads attributes from b[i:] up to the closing '>' and returns
// them with the index after the '>'.
func parseAttrs(b []byte, i int) (map[string]string, int) {
	attrs := map[string]string{}
	for i < len(b) {
		for i < len(b) && (isSpace(b[i]) || b[i] == '/') {
			i++
		}
		if i >= len(b) || b[i] == '>' {
			return attrs, min(i+1, len(b))
		}
		start := i
		for i < len(b) && !isSpace(b[i]) && b[i] != '=' && b[i] != '>' && b[i] != '/' {
			i++
		}
		key := strings.ToLower(string(b[start:i]))
		var val string
		if i < len(b) && b[i] == '=' {
			val, i = attrValue(b, i+1)
		}
		if _, dup := attrs[key]; !dup {
			attrs[key] = html.UnescapeString(val)
		}
	}
	return attrs, len(b)
}

// attrValue reads a quoted or unquoted attribute value at b[i:].
func attrValue(b []byte, i int) (string, int) {
	if i < len(b) && (b[i] == '"' || b[i] == '\'') {
		q := b[i]
		end := bytes.IndexByte(b[i+1:], q)
		if end < 0 {
			return string(b[i+1:]), len(b)
		}
		return string(b[i+1 : i+1+end]), i + end + 2
	}
	start := i
	for i < len(b) && !isSpace(b[i]) && b[i] != '>' {
		i++
	}
	return string(b[start:i]), i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
