package adapter

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fake(t *testing.T) (Adapter, string, *strings.Builder) {
	t.Helper()
	path, err := filepath.Abs("testdata/fakeadapter")
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	return Adapter{Path: path, Stderr: &stderr}, t.TempDir(), &stderr
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVersion(t *testing.T) {
	a, _, _ := fake(t)
	if v, err := a.Version(context.Background()); v != "1.2.3" || err != nil {
		t.Errorf("Version = %q, %v", v, err)
	}
}

func TestNA(t *testing.T) {
	a, st, stderr := fake(t)
	write(t, st, "na-userinfo", "no userinfo endpoint")
	err := a.Pools(context.Background(), st, "userinfo", 2, filepath.Join(st, "userinfo.pool"))
	if !errors.Is(err, ErrNA) || !strings.HasSuffix(err.Error(), "fake: userinfo: N/A: no userinfo endpoint") {
		t.Errorf("Pools of an N/A scenario: %v; want ErrNA with the reason", err)
	}
	if !strings.Contains(stderr.String(), "N/A: no userinfo endpoint") {
		t.Errorf("the adapter's stderr did not pass through: %q", stderr.String())
	}
}

func TestFailure(t *testing.T) {
	a, st, _ := fake(t)
	write(t, st, "fail-fresh", "")
	err := a.Fresh(context.Background(), st, "refresh")
	var e *Error
	if !errors.As(err, &e) || e.Code != 1 || errors.Is(err, ErrNA) || err.Error() != "fakeadapter fresh refresh failed (exit 1)" {
		t.Errorf("a failing fresh: %v", err)
	}
}

func TestPools(t *testing.T) {
	a, st, stderr := fake(t)
	out := filepath.Join(st, "userinfo.pool")
	if err := a.Pools(context.Background(), st, "userinfo", 256, out); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	calls, _ := os.ReadFile(filepath.Join(st, "calls"))
	if string(b) != "256 credentials\n" || string(calls) != "pools userinfo 256\n" || !strings.Contains(stderr.String(), "minted 256") {
		t.Errorf("pool %q, calls %q, stderr %q", b, calls, stderr.String())
	}
}
