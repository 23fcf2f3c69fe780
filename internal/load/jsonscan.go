package load

import (
	"bytes"
	"encoding/json"
)

// member returns the raw value of the top-level member key of the JSON
// object in body. It walks the top level, skipping strings (with their
// escapes) and nested objects and arrays without building them, so "issuer"
// inside a string or a nested object does not count, and it stops at the
// first member named key: the check of a response whose member comes first
// (issuer, access_token, active do in practice) costs nanoseconds, where a
// json.Unmarshal of a discovery document would cost the driver more than
// the request. A body without the member is walked to its end and fails.
// What follows the member is not validated; the body must only be braced
// ('{' first, '}' last, surrounding space aside). With duplicate keys the
// first wins (json.Unmarshal: the last). Only the member's own value is
// judged by the caller, strictly.
func member(body []byte, key string) ([]byte, bool) {
	i := skipSpace(body, 0)
	last := len(bytes.TrimRight(body, " \t\r\n")) - 1
	if i >= len(body) || body[i] != '{' || last <= i || body[last] != '}' {
		return nil, false
	}
	for i = skipSpace(body, i+1); i < last; {
		k, end, ok := scanString(body, i)
		if !ok {
			return nil, false
		}
		i = skipSpace(body, end)
		if i >= last || body[i] != ':' {
			return nil, false
		}
		vStart := skipSpace(body, i+1)
		vEnd, ok := scanValue(body[:last], vStart)
		if !ok {
			return nil, false
		}
		if keyIs(k, key) {
			return body[vStart:vEnd], true
		}
		i = skipSpace(body, vEnd)
		if i >= last || body[i] != ',' {
			return nil, false
		}
		i = skipSpace(body, i+1)
	}
	return nil, false
}

// keyIs compares a raw JSON string (with quotes) to key.
func keyIs(raw []byte, key string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1:len(raw)-1]) == key
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && s == key
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the string starting at b[i] (quotes included) and the
// index after it. It jumps from quote to quote: a quote ends the string
// unless an odd number of backslashes precedes it.
func scanString(b []byte, i int) (raw []byte, end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return nil, 0, false
		}
		j += q
		if escaped(b, i+1, j) {
			j++
			continue
		}
		return b[i : j+1], j + 1, true
	}
	return nil, 0, false
}

// escaped reports whether b[j] is preceded by an odd run of backslashes
// (none before from).
func escaped(b []byte, from, j int) bool {
	n := 0
	for k := j - 1; k >= from && b[k] == '\\'; k-- {
		n++
	}
	return n%2 == 1
}

// scanValue returns the index after the value starting at b[i].
func scanValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		_, end, ok := scanString(b, i)
		return end, ok
	case '{', '[':
		return scanNested(b, i)
	}
	j := i
	for j < len(b) && !endsLiteral(b[j]) {
		j++
	}
	return j, j > i
}

func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// scanNested skips a nested object or array, minding strings.
func scanNested(b []byte, i int) (int, bool) {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			_, end, ok := scanString(b, j)
			if !ok {
				return 0, false
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}

// nonEmptyString reports whether raw is a JSON string that json.Unmarshal
// accepts and that decodes to a non-empty Go string, without decoding it.
func nonEmptyString(raw []byte) bool {
	if len(raw) < 3 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	s := raw[1 : len(raw)-1]
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < ' ':
			return false
		case c == '\\':
			n := escapeLen(s[i+1:])
			if n == 0 {
				return false
			}
			i += n
		}
	}
	return true
}

// escapeLen is the length of the escape after a backslash; 0 if invalid.
func escapeLen(s []byte) int {
	if len(s) == 0 {
		return 0
	}
	switch s[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 1
	case 'u':
		if len(s) < 5 {
			return 0
		}
		for _, c := range s[1:5] {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return 0
			}
		}
		return 5
	}
	return 0
}
