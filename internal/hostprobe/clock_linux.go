package hostprobe

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the calling thread's CPU time so far (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}
