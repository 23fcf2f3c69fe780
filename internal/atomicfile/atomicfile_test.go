package atomicfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestCommitWritesWithModeAndAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.pool")
	f, err := Create(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("secret\n"))
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("destination exists before Commit (err=%v)", err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}

	g, err := Create(filepath.Join(dir, "aborted.json"), 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.Write([]byte("{"))
	g.Abort()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "out.pool" {
		t.Errorf("after Abort the directory holds %v, want only out.pool", names(entries))
	}
}

func TestCommitReplacesExistingFileWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "step.json")
	os.WriteFile(path, []byte("old content that is longer"), 0o644)
	if err := Write(path, 0o644, []byte("new"), nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("content %q, want %q", b, "new")
	}
}

func TestDashWritesToStdout(t *testing.T) {
	var out bytes.Buffer
	if err := Write("-", 0o644, []byte("data"), &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "data" {
		t.Errorf("stdout %q, want %q", out.String(), "data")
	}
}

func TestMissingDirectoryIsAnErrorNamingThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "x.json")
	_, err := Create(path, 0o644, nil)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(path)) {
		t.Errorf("err = %v, want an error naming %s", err, path)
	}
}

func names(es []os.DirEntry) []string {
	var n []string
	for _, e := range es {
		n = append(n, e.Name())
	}
	return n
}
