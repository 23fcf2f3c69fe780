package product

import "testing"

// TestReasonsDeclares: a failure reason is declared when it starts with one
// of the product's reasons; an empty declaration declares nothing.
func TestReasonsDeclares(t *testing.T) {
	rs := Reasons{"ZITADEL_BIN is not set and no Docker engine answers", ""}
	for reason, want := range map[string]bool{
		"ZITADEL_BIN is not set and no Docker engine answers (docker info failed); ...": true,
		"ZITADEL_BIN=/x is not an executable file":                                      false,
		"compose: building or pulling the images of zitadel's compose.yml failed":       false,
		"": false,
	} {
		if got := rs.Declares(reason); got != want {
			t.Errorf("Declares(%q) = %v, want %v", reason, got, want)
		}
	}
}
