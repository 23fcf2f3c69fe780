package load

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"time"
)

// Engines: how requests go on the wire.
const (
	// EngineRaw is a minimal HTTP/1.1 client on one TCP connection per
	// worker goroutine: the request is written from pre-built bytes, the
	// response parsed in place, nothing allocated per request. http only;
	// an https target falls back to EngineNetHTTP.
	EngineRaw = "raw"
	// EngineNetHTTP is Go's net/http client, one Transport with one
	// keep-alive connection per worker: http and https.
	EngineNetHTTP = "nethttp"
	// EngineEpoll, the default, is EngineRaw's client on event loops
	// instead of a goroutine per connection (epoll_linux.go):
	// min(GOMAXPROCS, c) loops, each owning its share of the connections
	// in its own epoll instance. Linux only; closed-loop single-request
	// scenarios over http only: in rate mode and on other OSes the step
	// uses EngineRaw, for https EngineNetHTTP (iteration scenarios always
	// use net/http). The step's driver.engine says which ran.
	EngineEpoll = "epoll"
)

// Response is what came back for a Request, or why nothing complete did.
type Response struct {
	Status int    // HTTP status; 0 when Err is set
	Body   []byte // the complete body; valid until the Sender's next Send
	// Err is a transport failure: no complete response arrived. A timeout
	// must satisfy errors.Is(err, context.DeadlineExceeded) or be a net.Error
	// whose Timeout() is true; anything else counts as a socket error.
	Err error
}

// Sender sends requests over one connection, one at a time. Send blocks
// until the response is complete (body read) or has failed, and gives up at
// deadline (connect, write and the whole response). The engine gives every
// worker its own Sender, so an implementation need not be safe for
// concurrent use; Send may keep req's buffers only until it returns. It is
// the seam for another engine (an open-loop scheduler passes the deadline
// of each request's intended send time plus the timeout).
type Sender interface {
	Send(req *Request, deadline time.Time) Response
	Close()
}

// NewSenderFunc makes the Sender of worker i.
type NewSenderFunc func(worker int) Sender

// maxBody bounds a response body; IdP responses are a few KB.
const maxBody = 8 << 20

// httpSender is a Sender over net/http with exactly one keep-alive
// connection: its own Transport, one connection per host, no proxy, no
// compression, HTTP/1.1.
type httpSender struct {
	client *http.Client
	buf    bytes.Buffer // body buffer reused across requests
}

// NewHTTPSender returns the net/http Sender factory. insecure skips TLS
// certificate verification.
func NewHTTPSender(insecure bool) NewSenderFunc {
	return func(int) Sender {
		d := &net.Dialer{KeepAlive: 30 * time.Second}
		tr := &http.Transport{
			Proxy:               nil,
			DialContext:         d.DialContext,
			MaxConnsPerHost:     1,
			MaxIdleConnsPerHost: 1,
			MaxIdleConns:        1,
			DisableCompression:  true,
			ForceAttemptHTTP2:   false,
			TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: insecure},
		}
		return &httpSender{client: &http.Client{
			Transport:     tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}}
	}
}

func (s *httpSender) Send(r *Request, deadline time.Time) Response {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	req, err := newHTTPRequest(ctx, r)
	if err != nil {
		return Response{Err: err}
	}
	resp, err := do(s.client, req)
	if err != nil {
		return Response{Err: err}
	}
	defer resp.Body.Close()
	s.buf.Reset()
	if _, err := s.buf.ReadFrom(io.LimitReader(resp.Body, maxBody)); err != nil {
		return Response{Err: err}
	}
	return Response{Status: resp.StatusCode, Body: s.buf.Bytes()}
}

// do sends req on client. An error before the client had a connection
// (its dial refused, failed or timed out, its TLS handshake failed) is
// returned as a failed dial, which the engine counts as a connection
// attempt, not a request: nothing was sent.
func do(client *http.Client, req *http.Request) (*http.Response, error) {
	var conn bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { conn = true }}
	resp, err := client.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err != nil && !conn && connectFailure(err) == connectNone {
		err = &net.OpError{Op: "dial", Net: "tcp", Err: err}
	}
	return resp, err
}

// newHTTPRequest turns the wire-form Request into an http.Request.
func newHTTPRequest(ctx context.Context, r *Request) (*http.Request, error) {
	var body io.Reader = http.NoBody
	if len(r.Body) > 0 {
		body = bytes.NewReader(r.Body)
	}
	u := *r.URL
	u.User = nil // its credentials are in the header block already
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(r.Header))
	for sc.Scan() {
		k, v, _ := bytes.Cut(bytes.TrimSuffix(sc.Bytes(), []byte("\r")), []byte(": "))
		if string(k) == "Host" {
			req.Host = string(v)
			continue
		}
		req.Header.Add(string(k), string(v))
	}
	return req, nil
}

func (s *httpSender) Close() { s.client.CloseIdleConnections() }

// isTimeout reports whether a transport error is a timeout.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
