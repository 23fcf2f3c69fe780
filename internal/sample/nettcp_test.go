package sample

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// Lines as a little-endian Linux prints them (the address words in host
// byte order).
const (
	tcpHeader = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	tcpTable  = tcpHeader +
		"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0000000000000000 100 0 0 10 0\n" +
		"   1: 0302010A:01BB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1003 1 0000000000000000 100 0 0 10 0\n" +
		"   2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 1004 1 0000000000000000 20 4 30 10 -1\n"
	tcp6Table = tcpHeader +
		"   0: 00000000000000000000000001000000:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2001 1 0000000000000000 100 0 0 10 0\n" +
		"   1: 0000000000000000FFFF00000100007F:1F93 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2003 1 0000000000000000 100 0 0 10 0\n" +
		"   2: B80D0120000000000000000001000000:1F94 00000000000000000000000000000000:0000 06 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 100 0 0 10 0\n"
)

func TestParseNetTCP(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("fixtures are as a little-endian kernel prints them")
	}
	tests := []struct {
		name, table string
		want        []string // "addr listen inode"
	}{
		{"tcp", tcpTable, []string{"127.0.0.1:8080 true 1001", "10.1.2.3:443 true 1003", "127.0.0.1:8080 false 1004"}},
		{"tcp6", tcp6Table, []string{"[::1]:8081 true 2001", "[::ffff:127.0.0.1]:8083 true 2003", "[2001:db8::1]:8084 false 0"}},
	}
	for _, tt := range tests {
		socks, err := ParseNetTCP(strings.NewReader(tt.table), tt.name)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []string
		for _, s := range socks {
			got = append(got, fmt.Sprintf("%s %t %d", s.Addr, s.Listen, s.Inode))
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestParseNetTCPErrors(t *testing.T) {
	header := "  sl  local_address rem_address   st\n"
	tests := []struct{ line, want string }{
		{"   0: 0100007F:1F90 00000000:0000 0A", "tcp:2: 4 fields"},
		{"   0: 0100007F1F90 00000000:0000 0A 0:0 00:0 0 0 0 1001", `tcp:2: local address "0100007F1F90": no ':'`},
		{"   0: 0100007:1F90 00000000:0000 0A 0:0 00:0 0 0 0 1001", "8 or 32 hex digits"},
		{"   0: 0100007F:XYZ 00000000:0000 0A 0:0 00:0 0 0 0 1001", "port"},
		{"   0: 0100007F:1F90 00000000:0000 0A 0:0 00:0 0 0 0 x", `tcp:2: inode "x"`},
	}
	for _, tt := range tests {
		_, err := ParseNetTCP(strings.NewReader(header+tt.line+"\n"), "tcp")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.line, err, tt.want)
		}
	}
}
