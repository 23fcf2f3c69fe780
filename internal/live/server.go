package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// CheckAddr reports whether addr is HOST:PORT (host may be empty: every
// interface; port 0: one the kernel picks).
func CheckAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want HOST:PORT: %w", err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("want HOST:PORT with a port number 0 to 65535, got port %q", port)
	}
	return nil
}

// Server serves Metrics at /metrics.
type Server struct {
	srv    *http.Server
	ln     net.Listener
	served chan error
}

// Listen listens on addr at once and serves m at /metrics until Close.
func Listen(addr string, m *Metrics) (*Server, error) {
	if err := CheckAddr(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return Serve(ln, m), nil
}

// Serve serves m at /metrics on ln until Close.
func Serve(ln net.Listener, m *Metrics) *Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln, served: make(chan error, 1)}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s
}

// Addr is the address it listens on (the port the kernel picked for 0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops listening and waits for scrapes in progress, until ctx is
// done; then it closes their connections.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	if e := <-s.served; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}
