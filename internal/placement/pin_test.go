package placement

import (
	"slices"
	"testing"
)

func TestPinned(t *testing.T) {
	for _, tt := range []struct {
		cpus string
		want []string
	}{
		{"", []string{"loadstep", "-c", "2"}},
		{"3", []string{"taskset", "-c", "3", "loadstep", "-c", "2"}},
		{"0-1,5", []string{"taskset", "-c", "0-1,5", "loadstep", "-c", "2"}},
	} {
		if got := Pinned(tt.cpus, "loadstep", "-c", "2"); !slices.Equal(got, tt.want) {
			t.Errorf("Pinned(%q) = %q, want %q", tt.cpus, got, tt.want)
		}
	}
}
