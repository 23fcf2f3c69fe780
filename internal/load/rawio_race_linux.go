//go:build race

package load

import "syscall"

// rawIO is rawio_linux.go's for -race builds: syscall.Read and Write tell
// the race detector that what one goroutine wrote to a socket
// happens-before another's read of it, as Go's own sockets do; a raw
// system call would hide that (a test server's state would look racy).
func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	if trap == syscall.SYS_WRITE {
		return syscall.Write(fd, b)
	}
	return syscall.Read(fd, b)
}
