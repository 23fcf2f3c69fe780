package load

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// A connection attempt that fails puts no request on the wire: the server
// never saw one. It is not a request of the step (not in requests, errors
// or the histograms) but a failed attempt of its own class, counted by
// cause (schema.ConnectErrors). The connection then waits before its next
// attempt (backoff), so a dead target costs the driver almost nothing, and
// the engine notes how long the target was unreachable (reach): a step
// whose target was still unreachable at its end lost its target.

// connectKind is the cause of a failed connection attempt; connectNone
// for an error that is not one.
type connectKind uint8

const (
	connectNone connectKind = iota
	connectRefused
	connectReset
	connectDNS
	connectTLS
	connectTimeout
	connectOther
)

// connectFailure says whether err (a Sender's Response.Err) is a failed
// connection attempt, and its cause. The engines report a failed dial as a
// *net.OpError with Op "dial" (net/http wraps it in a *url.Error), a host
// name that did not resolve as a *net.DNSError, a failed TLS handshake as
// one of crypto/tls's or crypto/x509's errors.
func connectFailure(err error) connectKind {
	var (
		dns   *net.DNSError
		op    *net.OpError
		rec   tls.RecordHeaderError
		alert tls.AlertError
		cert  *tls.CertificateVerificationError
		ua    x509.UnknownAuthorityError
		host  x509.HostnameError
		inv   x509.CertificateInvalidError
	)
	switch {
	case err == nil:
		return connectNone
	case errors.As(err, &dns):
		return connectDNS
	case errors.As(err, &rec), errors.As(err, &alert), errors.As(err, &cert),
		errors.As(err, &ua), errors.As(err, &host), errors.As(err, &inv):
		return connectTLS
	case !errors.As(err, &op) || op.Op != "dial":
		return connectNone
	case errors.Is(err, syscall.ECONNREFUSED):
		return connectRefused
	case errors.Is(err, syscall.ECONNRESET):
		return connectReset
	case isTimeout(err):
		return connectTimeout
	}
	return connectOther
}

// addConnect counts one failed attempt of cause k.
func addConnect(c *schema.ConnectErrors, k connectKind) {
	switch k {
	case connectRefused:
		c.Refused++
	case connectReset:
		c.Reset++
	case connectDNS:
		c.DNS++
	case connectTLS:
		c.TLS++
	case connectTimeout:
		c.Timeout++
	default:
		c.Other++
	}
}

// backoff is one connection's wait between failed connection attempts:
// 1 ms, doubling, at most max (the step's interval).
type backoff struct {
	next, max time.Duration
}

const firstBackoff = time.Millisecond

// wait returns how long to wait after a failed attempt and doubles it.
func (b *backoff) wait() time.Duration {
	d := max(b.next, firstBackoff)
	b.next = min(2*d, b.max)
	return min(d, b.max)
}

// reset starts over after a response: the target answers again.
func (b *backoff) reset() { b.next = 0 }

// reach tracks, over all connections, whether the target is reachable:
// it becomes unreachable at a failed connection attempt and reachable
// again at the next complete HTTP response. Times are offsets from the
// step's launch (monotonic); the hot path (a response while reachable) is
// one atomic load.
type reach struct {
	launch time.Time
	since  atomic.Int64 // offset+1 of the failure that made it unreachable; 0: reachable
	mu     sync.Mutex
	spans  [][2]time.Duration // unreachable spans that ended, as offsets
}

func (r *reach) offset(t time.Time) int64 { return int64(t.Sub(r.launch)) + 1 }

// failed notes a failed connection attempt at t.
func (r *reach) failed(t time.Time) {
	if r.since.Load() == 0 {
		r.since.CompareAndSwap(0, r.offset(t))
	}
}

// answered notes a complete HTTP response at t.
func (r *reach) answered(t time.Time) {
	if r.since.Load() == 0 {
		return
	}
	if s := r.since.Swap(0); s != 0 {
		r.mu.Lock()
		r.spans = append(r.spans, [2]time.Duration{time.Duration(s - 1), t.Sub(r.launch)})
		r.mu.Unlock()
	}
}

// summary is what the step says of reachability over the window [start,
// end): how long the target was unreachable in it, and since when it was
// unreachable at the end of the step (zero: it answered last). Call after
// the workers ended.
func (r *reach) summary(start, end time.Time) (unreachable time.Duration, lostAt time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	spans := r.spans
	if s := r.since.Load(); s != 0 {
		lostAt = r.launch.Add(time.Duration(s - 1))
		spans = append(spans, [2]time.Duration{time.Duration(s - 1), end.Sub(r.launch)})
	}
	ws, we := start.Sub(r.launch), end.Sub(r.launch)
	for _, sp := range spans {
		if d := min(sp[1], we) - max(sp[0], ws); d > 0 {
			unreachable += d
		}
	}
	return unreachable, lostAt
}
