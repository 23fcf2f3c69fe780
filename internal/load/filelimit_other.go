//go:build !unix

package load

// RaiseFileLimit does nothing where there is no RLIMIT_NOFILE.
func RaiseFileLimit(conns int) error { return nil }
