package sample

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// tcpListen is the state of a listening socket in /proc/net/tcp ("st" 0A,
// TCP_LISTEN of the kernel's tcp_states.h).
const tcpListen = "0A"

// Socket is one line of /proc/net/tcp or tcp6.
type Socket struct {
	Addr   netip.AddrPort // the local address
	Listen bool           // in state LISTEN
	Inode  uint64         // the socket inode, as PID/fd links name it
}

// ParseNetTCP parses the socket table of /proc/net/tcp or
// /proc/net/tcp6 (the same format; the address width differs). name says
// which, for errors.
func ParseNetTCP(r io.Reader, name string) ([]Socket, error) {
	var out []Socket
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if line == 1 || len(f) == 0 { // the header
			continue
		}
		if len(f) < 10 {
			return nil, fmt.Errorf("%s:%d: %d fields, want at least 10", name, line, len(f))
		}
		addr, err := parseProcAddr(f[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: local address %q: %w", name, line, f[1], err)
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: inode %q: %w", name, line, f[9], err)
		}
		out = append(out, Socket{Addr: addr, Listen: f[3] == tcpListen, Inode: inode})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return out, nil
}

// parseProcAddr parses "0100007F:1F90": the address as the kernel prints
// it (each 32-bit word in host byte order, as hex) and the port in hex.
func parseProcAddr(s string) (netip.AddrPort, error) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, errors.New("no ':' before the port")
	}
	raw, err := hex.DecodeString(hexAddr)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, errors.New("want 8 or 32 hex digits")
	}
	for i := 0; i < len(raw); i += 4 { // each word back to network byte order
		binary.NativeEndian.PutUint32(raw[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("port: %w", err)
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr, uint16(port)), nil
}
