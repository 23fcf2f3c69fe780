package readback

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// Lines as a little-endian Linux prints them (the address words in host
// byte order): listeners on 127.0.0.1:8080, 0.0.0.0:9000, 10.1.2.3:443 and
// an established connection; tcp6 listeners on ::1, ::, ::ffff:127.0.0.1
// and 2001:db8::1.
const (
	fixtureTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0000000000000000 100 0 0 10 0
   1: 00000000:2328 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1002 1 0000000000000000 100 0 0 10 0
   2: 0302010A:01BB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1003 1 0000000000000000 100 0 0 10 0
   3: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 1004 1 0000000000000000 20 4 30 10 -1
`
	fixtureTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2001 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000000000000:1F92 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2002 1 0000000000000000 100 0 0 10 0
   2: 0000000000000000FFFF00000100007F:1F93 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2003 1 0000000000000000 100 0 0 10 0
   3: B80D0120000000000000000001000000:1F94 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2004 1 0000000000000000 100 0 0 10 0
`
)

// littleEndian skips on a big-endian machine: the fixtures are as a
// little-endian kernel prints them.
func littleEndian(t *testing.T) {
	t.Helper()
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("fixtures are as a little-endian kernel prints them")
	}
}

func TestListenerLoopback(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:80", true}, {"127.5.6.7:80", true}, {"[::1]:80", true}, {"[::ffff:127.0.0.1]:80", true},
		{"0.0.0.0:80", false}, {"[::]:80", false}, {"10.0.0.5:80", false}, {"[::ffff:10.0.0.5]:80", false},
		{"[2001:db8::1]:80", false},
	}
	for _, tt := range tests {
		l := Listener{Addr: netip.MustParseAddrPort(tt.addr)}
		if l.Loopback() != tt.want {
			t.Errorf("%s: loopback %t, want %t", tt.addr, l.Loopback(), tt.want)
		}
	}
}

// fakeProc writes a proc tree: processes pid -> pgid, each holding the
// socket inodes given, and each with the fixture net/tcp and net/tcp6.
func fakeProc(t *testing.T, procs map[int][]uint64, pgids map[int]int) string {
	t.Helper()
	root := t.TempDir()
	for pid, inodes := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		mustMkdir(t, filepath.Join(dir, "fd"))
		stat := fmt.Sprintf("%d (a (b) c) S 1 %d %d 0 -1", pid, pgids[pid], pgids[pid])
		mustWrite(t, filepath.Join(dir, "stat"), stat)
		mustWrite(t, filepath.Join(dir, "comm"), fmt.Sprintf("proc%d\n", pid))
		for i, inode := range inodes {
			if err := os.Symlink(fmt.Sprintf("socket:[%d]", inode), filepath.Join(dir, "fd", strconv.Itoa(i+3))); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("/dev/null", filepath.Join(dir, "fd", "0")); err != nil {
			t.Fatal(err)
		}
		mustMkdir(t, filepath.Join(dir, "net"))
		mustWrite(t, filepath.Join(dir, "net", "tcp"), fixtureTCP)
		mustWrite(t, filepath.Join(dir, "net", "tcp6"), fixtureTCP6)
	}
	mustMkdir(t, filepath.Join(root, "self"))
	return root
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, file, data string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadListeners reads the fact from fake proc trees: the group's
// listening sockets only (not another group's, not a connection), once
// each, and an error naming a socket bound beyond loopback.
func TestReadListeners(t *testing.T) {
	littleEndian(t)
	tests := []struct {
		name               string
		procs              map[int][]uint64
		pgids              map[int]int
		wantValue, wantErr string
	}{
		{"loopback only",
			map[int][]uint64{10: {1001}, 11: {1001, 2001, 2003, 1004}, 12: {1002, 2002}},
			map[int]int{10: 10, 11: 10, 12: 99},
			"127.0.0.1:8080 [::1]:8081 [::ffff:127.0.0.1]:8083", ""},
		{"beyond loopback",
			map[int][]uint64{10: {1001, 1002}, 11: {2002, 2004}},
			map[int]int{10: 10, 11: 10},
			"", "p listens beyond loopback: 0.0.0.0:9000 (pid 10 proc10), [::]:8082 (pid 11 proc11), [2001:db8::1]:8084 (pid 11 proc11)"},
		{"leader gone, a member left",
			map[int][]uint64{11: {2001}, 12: {}},
			map[int]int{11: 10, 12: 10},
			"[::1]:8081", ""},
		{"no listener",
			map[int][]uint64{10: {1004}},
			map[int]int{10: 10},
			"", "process group 10: no listening TCP socket"},
		{"no process",
			map[int][]uint64{10: {1001}},
			map[int]int{10: 7},
			"", "process group 10: no process left"},
	}
	for _, tt := range tests {
		proc := fakeProc(t, tt.procs, tt.pgids)
		facts, err := Read(context.Background(), Config{Product: "p", Group: 10, Proc: proc, Timeout: time.Second})
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(facts.Facts) != 1 || facts.Facts[0].Name != "listeners" || facts.Facts[0].Source != schema.FactRead ||
			facts.Facts[0].Value != tt.wantValue || !strings.Contains(facts.Facts[0].From, "process group 10") {
			t.Errorf("%s: facts %+v, want one read fact listeners = %q", tt.name, facts.Facts, tt.wantValue)
		}
	}
}

// TestGroupListenersReal opens a loopback and an every-interface listener
// in this process and finds both, classified, among the listeners of its
// process group in the real /proc.
func TestGroupListenersReal(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the Linux proc filesystem")
	}
	var ports []int
	for _, addr := range []string{"127.0.0.1:0", "0.0.0.0:0"} {
		l, err := net.Listen("tcp4", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	ls, err := groupListeners("/proc", syscall.Getpgrp())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{fmt.Sprintf("127.0.0.1:%d", ports[0]): true, fmt.Sprintf("0.0.0.0:%d", ports[1]): false}
	for _, l := range ls {
		loop, ok := want[l.String()]
		if !ok {
			continue
		}
		delete(want, l.String())
		if l.Loopback() != loop || l.PID != os.Getpid() {
			t.Errorf("%s: loopback %t pid %d, want %t pid %d", l, l.Loopback(), l.PID, loop, os.Getpid())
		}
	}
	if len(want) > 0 {
		t.Errorf("not found among the group's listeners %v: %v", ls, want)
	}
}
