package pool

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadParsesHeaderAndCredentials(t *testing.T) {
	in := "# idpbench-pool kind=refresh_token product=hydra minted=2026-11-30T10:00:00Z\n" +
		"# a comment\n\ntok1\r\ntok2\n"
	p, err := Read(strings.NewReader(in), "rt.pool")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Creds, ","); got != "tok1,tok2" {
		t.Errorf("creds %q, want tok1,tok2", got)
	}
	if p.Header["kind"] != "refresh_token" || p.Header["product"] != "hydra" {
		t.Errorf("header %v", p.Header)
	}
	// Credentials keep their file lines, for errors that name them.
	if p.Line(0) != 4 || p.Line(1) != 5 {
		t.Errorf("lines %v, want [4 5]", p.Lines)
	}
}

func TestReadErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "pool p.pool: no credentials"},
		{"only comments", "# idpbench-pool kind=x\n# nothing\n", "pool p.pool: no credentials"},
		{"white space", "tok1\ntok 2\n", "pool p.pool line 2: a credential must not contain white space"},
		{"bad header", "# idpbench-pool kind\ntok\n", "pool p.pool line 1: malformed header field"},
		{"over-long line", "tok1\n" + strings.Repeat("a", maxLine+1) + "\n", "pool p.pool line 2: longer than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.in), "p.pool")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestWriteFileRoundTripsWithMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "at.pool")
	h := map[string]string{"kind": "access_token", "product": "refop", "flow": "client_credentials"}
	if err := WriteFile(path, h, []string{"a", "b", "c"}, nil); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != Mode {
		t.Errorf("mode %v, want %v", fi.Mode().Perm(), Mode)
	}
	b, _ := os.ReadFile(path)
	if !bytes.HasPrefix(b, []byte("# idpbench-pool kind=access_token flow=client_credentials product=refop\n")) {
		t.Errorf("header line: %q", strings.SplitN(string(b), "\n", 2)[0])
	}
	p, err := ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Creds) != 3 || p.Header["flow"] != "client_credentials" {
		t.Errorf("read back %+v", p)
	}
}

func TestReadFileMissingNamesTheFile(t *testing.T) {
	_, err := ReadFile("/nonexistent/x.pool", nil)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/x.pool") {
		t.Errorf("err = %v, want the path named", err)
	}
}
