//go:build !race

package load

import (
	"syscall"
	"unsafe"
)

// rawIO is a read or write (trap: SYS_READ, SYS_WRITE) on a non-blocking
// socket of EngineEpoll: it never blocks, so it bypasses the scheduler's
// system call bookkeeping (see rawio_race_linux.go for -race builds).
func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	n, _, errno := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
