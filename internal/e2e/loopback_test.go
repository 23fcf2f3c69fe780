package e2e

import (
	"fmt"
	"regexp"
	"strings"
)

// loopbackAddr is a listening address on loopback as a listeners fact
// writes it: 127.x.y.z, [::1] or an IPv4-mapped 127.x.y.z, with its port.
// Matched by text, apart from readback's own test of the address.
var loopbackAddr = regexp.MustCompile(`^(127(\.[0-9]{1,3}){3}|\[::1\]|\[::ffff:127(\.[0-9]{1,3}){3}\]):[0-9]+$`)

// LoopbackOnly checks addrs, a listeners fact's value ("127.0.0.1:80
// [::1]:81 ..."): not empty, and loopback addresses only. what names the
// server in the error.
func LoopbackOnly(what, addrs string) error {
	for _, a := range strings.Split(addrs, " ") {
		if !loopbackAddr.MatchString(a) {
			return fmt.Errorf("%s: want listeners on loopback only, got %q", what, addrs)
		}
	}
	return nil
}
