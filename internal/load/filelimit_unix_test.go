//go:build unix

package load

import (
	"strings"
	"testing"
)

func TestCheckFileLimit(t *testing.T) {
	tests := []struct {
		conns     int
		cur, hard uint64
		ok        bool
	}{
		{1000, 1 << 20, 1 << 20, true},
		{10000, 10064, 10064, true},
		{10000, 10063, 10063, false},
		{10000, 4096, 4096, false},
	}
	for _, tt := range tests {
		err := checkFileLimit(tt.conns, tt.cur, tt.hard)
		if (err == nil) != tt.ok {
			t.Errorf("checkFileLimit(%d, %d, %d) = %v", tt.conns, tt.cur, tt.hard, err)
		}
		if err != nil {
			for _, want := range []string{"RLIMIT_NOFILE", "ulimit -Hn", "-c 10000"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
		}
	}
}
