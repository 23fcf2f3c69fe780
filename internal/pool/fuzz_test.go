package pool

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzRead: a pool file that parses names each credential's own line,
// holds no credential a reader would take for something else (blank,
// white space, a comment), and round-trips: written with WriteFile and
// read again it gives the same header and credentials.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		// what mintpool writes
		"# idpbench-pool kind=refresh_token flow=refresh_token minted=2026-11-30T10:00:00Z product=hydra expires=2026-11-30T11:00:00Z\n" +
			"ory_rt_Zm9vYmFyYmF6cXV4.aGVsbG8td29ybGQtc2lnbmF0dXJl\nory_rt_c2Vjb25k.dGhpcmQ\n",
		"# idpbench-pool kind=assertion aud=http://127.0.0.1:9998/ flow=client-assertion iss=service kid=key1 ttl=10m\n" +
			"eyJhbGciOiJSUzI1NiIsImtpZCI6ImtleTEifQ.eyJpc3MiOiJzZXJ2aWNlIn0.c2ln\n",
		// what test.sh builds by hand: a header, then tokens from a loop
		"# idpbench-pool kind=access_token product=refop flow=jwt-bearer\nZk9VT3N0Wk5sR2pn\r\nYW5vdGhlcg\n",
		"# a comment\n\n  \ntok1\n# idpbench-pool kind=x\ntok2",
		"tok\n# idpbench-poolkind=glued\n",
		"# idpbench-pool kind\ntok\n",
		"tok 2\n",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := Read(bytes.NewReader(in), "in.pool")
		if err != nil {
			return
		}
		lines := strings.Split(string(in), "\n")
		for i, c := range p.Creds {
			if c == "" || strings.ContainsAny(c, " \t\n") || strings.HasPrefix(c, "#") || strings.HasSuffix(c, "\r") {
				t.Fatalf("credential %d %q is not one", i, c)
			}
			if l := p.Line(i); l < 1 || l > len(lines) || strings.TrimRight(lines[l-1], "\r") != c {
				t.Fatalf("credential %d %q is said to be on line %d", i, c, l)
			}
		}
		path := filepath.Join(dir, "again.pool")
		if err := WriteFile(path, p.Header, p.Creds, nil); err != nil {
			t.Fatal(err)
		}
		again, err := ReadFile(path, nil)
		if err != nil {
			t.Fatalf("the pool written from a parsed one does not read: %v", err)
		}
		if !reflect.DeepEqual(again.Creds, p.Creds) || !reflect.DeepEqual(again.Header, p.Header) {
			t.Fatalf("round trip: header %v creds %q, want %v %q", again.Header, again.Creds, p.Header, p.Creds)
		}
	})
}
