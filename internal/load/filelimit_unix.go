//go:build unix

package load

import (
	"fmt"
	"syscall"
)

// fileMargin is the descriptors loadstep needs beside its connections:
// stdio, the epoll instance, the pre-flight dial, pool and output files.
const fileMargin = 64

// RaiseFileLimit makes room for conns connections: it raises the soft
// RLIMIT_NOFILE to the hard limit (Go does this at start-up too, but a
// parent may have lowered it since) and fails, naming the limit and how to
// raise it, when even the hard limit is below conns plus a margin.
func RaiseFileLimit(conns int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("reading the open-file limit (RLIMIT_NOFILE): %w", err)
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = raised.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			lim = raised
		}
	}
	return checkFileLimit(conns, lim.Cur, lim.Max)
}

// checkFileLimit fails when the soft limit cur cannot hold conns connections.
func checkFileLimit(conns int, cur, hard uint64) error {
	need := uint64(conns) + fileMargin
	if cur >= need {
		return nil
	}
	return fmt.Errorf("-c %d needs about %d open files, but the open-file limit (RLIMIT_NOFILE) is %d, hard limit %d: "+
		"raise the hard limit (as root: ulimit -Hn %d; systemd: LimitNOFILE=; /etc/security/limits.conf: nofile) or use fewer connections",
		conns, need, cur, hard, need)
}
