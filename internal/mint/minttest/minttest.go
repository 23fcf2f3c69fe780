// Package minttest holds the checks the tests of mint and of the products'
// minting (Zitadel's, against its stand-in) share: the pool file mintpool
// wrote, nothing left behind, a stderr written from several goroutines.
package minttest

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/idpbench/idpbench/internal/pool"
)

// ReadPool reads a pool file mintpool wrote and checks its mode (0600).
func ReadPool(t *testing.T, path string) *pool.Pool {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("pool file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("pool mode = %v, want 0600", fi.Mode().Perm())
	}
	p, err := pool.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// AssertEmptyDir fails when dir holds anything (a pool or a temp file).
func AssertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind: %s", filepath.Join(dir, e.Name()))
	}
}

// SyncBuf is a concurrency-safe stderr.
type SyncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *SyncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
