package readback

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	procfs "github.com/idpbench/idpbench/internal/sample"
)

// Listener is a listening TCP socket of a process group.
type Listener struct {
	Addr  netip.AddrPort
	Inode uint64
	PID   int    // a process of the group holding it
	Comm  string // that process's name (/proc/PID/comm)
}

// Loopback reports whether l accepts connections from this machine only:
// 127.0.0.0/8, ::1 or an IPv4-mapped 127.x address.
func (l Listener) Loopback() bool {
	return l.Addr.Addr().Unmap().IsLoopback()
}

// String is the address, as the fact lists it.
func (l Listener) String() string { return l.Addr.String() }

// groupListeners returns the listening TCP sockets (IPv4 and IPv6) held
// by the processes of process group pgid, read from the proc filesystem
// at proc: the group's processes from PID/stat, their sockets from the
// PID/fd links, the sockets' addresses from a member's net/tcp and
// net/tcp6 (the group's network namespace). Sorted by address, each
// socket once.
func groupListeners(proc string, pgid int) ([]Listener, error) {
	pids, err := groupPIDs(proc, pgid)
	if err != nil {
		return nil, err
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("process group %d: no process left", pgid)
	}
	netns := pids[0] // a member, the leader when it runs: the group shares one namespace
	if slices.Contains(pids, pgid) {
		netns = pgid
	}
	var table []procfs.Socket
	for _, f := range []string{"tcp", "tcp6"} {
		name := filepath.Join(proc, strconv.Itoa(netns), "net", f)
		b, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) && f == "tcp6" {
			continue // a kernel without IPv6
		}
		if err != nil {
			return nil, fmt.Errorf("reading the sockets of process group %d: %w", pgid, err)
		}
		s, err := procfs.ParseNetTCP(bytes.NewReader(b), name)
		if err != nil {
			return nil, err
		}
		table = append(table, s...)
	}
	listening := map[uint64]netip.AddrPort{}
	for _, s := range table {
		if s.Listen {
			listening[s.Inode] = s.Addr
		}
	}
	var out []Listener
	seen := map[uint64]bool{}
	for _, pid := range pids {
		for _, inode := range socketInodes(proc, pid) {
			addr, ok := listening[inode]
			if !ok || seen[inode] {
				continue
			}
			seen[inode] = true
			out = append(out, Listener{Addr: addr, Inode: inode, PID: pid, Comm: comm(proc, pid)})
		}
	}
	slices.SortFunc(out, func(a, b Listener) int { return a.Addr.Compare(b.Addr) })
	return out, nil
}

// groupPIDs lists the live processes whose process group is pgid (a
// zombie holds no sockets).
func groupPIDs(proc string, pgid int) ([]int, error) {
	t := procfs.NewProcTable(proc)
	if err := t.Scan(); err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	var pids []int
	for _, p := range t.Procs {
		if p.PGRP == pgid && p.State != 'Z' {
			pids = append(pids, p.PID)
		}
	}
	return pids, nil
}

// socketInodes lists the socket inodes of pid's open files ("socket:[N]"
// links in PID/fd). A process that exited meanwhile has none.
func socketInodes(proc string, pid int) []uint64 {
	dir := filepath.Join(proc, strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []uint64
	for _, e := range ents {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if n, ok := strings.CutPrefix(link, "socket:["); ok {
			if inode, err := strconv.ParseUint(strings.TrimSuffix(n, "]"), 10, 64); err == nil {
				out = append(out, inode)
			}
		}
	}
	return out
}

func comm(proc string, pid int) string {
	b, _ := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "comm"))
	return strings.TrimSpace(string(b))
}

// listeners reads the TCP listeners of process group c.Group into the fact
// "listeners"; none at all, or one bound beyond loopback, is an error
// naming it.
func (r *Reader) listeners() error {
	ls, err := groupListeners(r.cfg.Proc, r.cfg.Group)
	if err != nil {
		return err
	}
	if len(ls) == 0 {
		return fmt.Errorf("process group %d: no listening TCP socket", r.cfg.Group)
	}
	var addrs, beyond []string
	for _, l := range ls {
		addrs = append(addrs, l.String())
		if !l.Loopback() {
			beyond = append(beyond, fmt.Sprintf("%s (pid %d %s)", l, l.PID, l.Comm))
		}
	}
	if len(beyond) > 0 {
		return fmt.Errorf("%s listens beyond loopback: %s", r.cfg.Product, strings.Join(beyond, ", "))
	}
	r.Fact("listeners", strings.Join(addrs, " "),
		fmt.Sprintf("/proc/net/tcp and /proc/net/tcp6: listening sockets of process group %d", r.cfg.Group))
	return nil
}
