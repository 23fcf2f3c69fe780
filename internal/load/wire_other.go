//go:build !unix

package load

import "net"

// wire is what the raw sender reads its responses from; outside unix it
// is the plain connection (see wire_unix.go for the one-syscall-less path).
type wire struct{ conn net.Conn }

func newWire(conn net.Conn) *wire { return &wire{conn: conn} }

func (w *wire) send(req []byte) error {
	_, err := w.conn.Write(req)
	return err
}

func (w *wire) Read(p []byte) (int, error) { return w.conn.Read(p) }
