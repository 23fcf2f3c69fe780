package load

import (
	"bytes"
	"encoding/json"
)

// member returns the raw value of the top-level member key of the JSON
// object in body. It walks the structure (strings and their escapes,
// nested objects and arrays) without building it — a full json.Unmarshal
// of a discovery document costs the driver more than the request itself —
// so "issuer" inside a string or a nested object does not count. A body
// that is not one object yields false; with duplicate keys the last wins,
// as with json.Unmarshal. Only the member's own value is decoded by the
// caller, strictly.
func member(body []byte, key string) ([]byte, bool) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, false
	}
	var found []byte
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return nil, false
	}
	for i < len(body) {
		k, end, ok := scanString(body, i)
		if !ok {
			return nil, false
		}
		i = skipSpace(body, end)
		if i >= len(body) || body[i] != ':' {
			return nil, false
		}
		vStart := skipSpace(body, i+1)
		vEnd, ok := scanValue(body, vStart)
		if !ok {
			return nil, false
		}
		if keyIs(k, key) {
			found = body[vStart:vEnd]
		}
		i = skipSpace(body, vEnd)
		switch {
		case i < len(body) && body[i] == ',':
			i = skipSpace(body, i+1)
		case i < len(body) && body[i] == '}':
			if found == nil || skipSpace(body, i+1) != len(body) {
				return nil, false
			}
			return found, true
		default:
			return nil, false
		}
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
// index after it.
func scanString(b []byte, i int) (raw []byte, end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return b[i : j+1], j + 1, true
		}
	}
	return nil, 0, false
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
	for j < len(b) && bytes.IndexByte([]byte(",}] \t\r\n"), b[j]) < 0 {
		j++
	}
	return j, j > i
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
