//go:build !linux

package hostprobe

import "time"

func threadCPU() (time.Duration, error) { return 0, ErrUnsupported }
