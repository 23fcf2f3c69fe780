// Package atomicfile writes a file so that it appears complete or not at all:
// data goes to a temporary file in the same directory, which is renamed over
// the destination on Commit and removed on Abort.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// File is an output being written. "-" writes straight to the given stdout.
type File struct {
	io.Writer
	path   string
	tmp    *os.File
	direct *os.File // an existing non-regular file (/dev/null, a FIFO), written in place
	done   bool
}

// Create starts writing path with permission perm. For path "-" it writes to
// stdout and Commit/Abort do nothing. An existing path that is not a regular
// file (/dev/null, a FIFO, a symlink such as /dev/stdout) is written in
// place, not atomically: renaming over it would replace the device or link.
func Create(path string, perm os.FileMode, stdout io.Writer) (*File, error) {
	if path == "-" || path == "" {
		return &File{Writer: stdout, path: "-"}, nil
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return nil, fmt.Errorf("creating %s: %w", path, err)
		}
		return &File{Writer: f, path: path, direct: f}, nil
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	return &File{Writer: tmp, path: path, tmp: tmp}, nil
}

// Commit flushes the data to disk and renames it into place.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	if f.direct != nil {
		f.done = true
		if err := f.direct.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
		return nil
	}
	if f.tmp == nil {
		return nil
	}
	f.done = true
	err := f.tmp.Sync()
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.tmp.Name())
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return nil
}

// Abort discards what was written. It is safe to call after Commit.
func (f *File) Abort() {
	if f.direct != nil && !f.done {
		f.done = true
		f.direct.Close()
		return
	}
	if f.tmp == nil || f.done {
		return
	}
	f.done = true
	f.tmp.Close()
	os.Remove(f.tmp.Name())
}

// Write writes data to path atomically with permission perm.
func Write(path string, perm os.FileMode, data []byte, stdout io.Writer) error {
	f, err := Create(path, perm, stdout)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}
