package report

import (
	"strings"
	"testing"
)

func TestQueryCell(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT 1", "`SELECT 1`"},
		{"SELECT a ||\n   b", "`SELECT a \\|\\| b`"},
		{"SELECT `x`", "`` SELECT `x` ``"},
		{strings.Repeat("x", QueryChars+5), "`" + strings.Repeat("x", QueryChars-1) + "…`"},
		{"  ", "(empty)"},
	}
	for _, tc := range tests {
		if got := queryCell(tc.in); got != tc.want {
			t.Errorf("queryCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
