package load

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Request is one HTTP request an iteration sends.
type Request struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

// Response is what came back for a Request, or why nothing complete did.
type Response struct {
	Status int    // HTTP status; 0 when Err is set
	Body   []byte // the complete body; valid until the Sender's next Send
	// Err is a transport failure: no complete response arrived. A timeout
	// must satisfy errors.Is(err, context.DeadlineExceeded) or be a net.Error
	// whose Timeout() is true; anything else counts as a socket error.
	Err error
}

// Sender sends requests over one connection, one at a time. Send blocks until
// the response is complete (body read) or has failed; ctx carries the
// per-request timeout. The engine gives every worker its own Sender, so an
// implementation need not be safe for concurrent use. It is the seam for
// another engine (a raw-socket client, an open-loop scheduler).
type Sender interface {
	Send(ctx context.Context, req *Request) Response
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
	rawURL string       // the last URL sent and its parsed form
	url    *url.URL
}

// NewHTTPSender returns the default Sender factory. insecure skips TLS
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

func (s *httpSender) Send(ctx context.Context, r *Request) Response {
	req, err := s.newRequest(ctx, r)
	if err != nil {
		return Response{Err: err}
	}
	for k, v := range r.Header {
		if k == "Host" && len(v) > 0 {
			req.Host = v[0]
			continue
		}
		req.Header[k] = v
	}
	resp, err := s.client.Do(req)
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

// newRequest builds the http.Request, parsing the URL only when it changes.
func (s *httpSender) newRequest(ctx context.Context, r *Request) (*http.Request, error) {
	if r.URL != s.rawURL || s.url == nil {
		u, err := url.Parse(r.URL)
		if err != nil {
			return nil, err
		}
		s.rawURL, s.url = r.URL, u
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, "http://placeholder/", bytes.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	u := *s.url
	req.URL, req.Host = &u, u.Host
	if len(r.Body) == 0 {
		req.Body, req.GetBody, req.ContentLength = http.NoBody, nil, 0
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
