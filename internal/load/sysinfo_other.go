//go:build !linux

package load

import "time"

// On other systems the driver's CPU figures are zero: loadstep is measured on Linux.
func selfCPU() time.Duration { return 0 }
func hostJiffies() hostCPU   { return hostCPU{} }
func kernelRelease() string  { return "" }

// readThreads: the per-thread run-queue wait is a Linux schedstat figure.
func readThreads(string) (map[int]schedTimes, bool) { return nil, false }
