// Package hsperf reads a HotSpot JVM's performance counters from its
// hsperfdata file (java.io.tmpdir/hsperfdata_USER/PID), the memory-mapped
// file the JVM keeps up to date and jstat reads. Reading it does not attach
// to the JVM, stop it at a safepoint or load anything into it: the
// measurement costs the JVM nothing.
//
// The layout (OpenJDK src/hotspot/share/runtime/perfMemory.hpp): a 32-byte
// prologue, then entries. Prologue: magic 0xcafec0c0 (big-endian bytes),
// byte order (0 big, 1 little endian), major and minor version, accessible,
// used, overflow, modification time stamp, the first entry's offset and
// the number of entries. Entry: its length, the offset of its
// NUL-terminated name, vector length (0 for a scalar), data type ('J' a
// 64-bit long, 'B' bytes), flags, units, variability and the offset of its
// data, all offsets from the entry's start.
package hsperf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

const (
	magic        = 0xcafec0c0
	prologueSize = 32
	entryHeader  = 20
)

// Counters are a JVM's scalar long counters by name, e.g.
// "java.ci.totalTime" (ticks the JIT compilers spent compiling) and
// "sun.os.hrt.frequency" (ticks per second).
type Counters map[string]int64

// Parse decodes an hsperfdata file's scalar long counters. A file that is
// not one, or is truncated, is an error naming what is wrong.
func Parse(b []byte) (Counters, error) {
	if len(b) < prologueSize {
		return nil, fmt.Errorf("hsperfdata: %d bytes, shorter than the %d-byte prologue", len(b), prologueSize)
	}
	if m := binary.BigEndian.Uint32(b); m != magic {
		return nil, fmt.Errorf("hsperfdata: magic %#x, want %#x", m, magic)
	}
	var order binary.ByteOrder = binary.BigEndian
	if b[4] == 1 {
		order = binary.LittleEndian
	}
	if b[5] != 2 {
		return nil, fmt.Errorf("hsperfdata: version %d.%d, want 2.x", b[5], b[6])
	}
	off, n := int(order.Uint32(b[24:])), int(order.Uint32(b[28:]))
	c := make(Counters, n)
	for i := 0; i < n; i++ {
		if off < prologueSize || off+entryHeader > len(b) {
			return nil, fmt.Errorf("hsperfdata: entry %d at offset %d lies outside the %d-byte file", i, off, len(b))
		}
		e := b[off:]
		length := int(order.Uint32(e))
		nameOff, vlen, typ, dataOff := int(order.Uint32(e[4:])), order.Uint32(e[8:]), e[12], int(order.Uint32(e[16:]))
		if length < entryHeader || length > len(e) || nameOff >= length || dataOff > length {
			return nil, fmt.Errorf("hsperfdata: entry %d at offset %d: length %d, name at %d, data at %d do not fit", i, off, length, nameOff, dataOff)
		}
		name, _, ok := bytes.Cut(e[nameOff:length], []byte{0})
		if !ok {
			return nil, fmt.Errorf("hsperfdata: entry %d at offset %d: unterminated name", i, off)
		}
		if typ == 'J' && vlen == 0 {
			if dataOff+8 > length {
				return nil, fmt.Errorf("hsperfdata: entry %q: its long lies outside the entry", name)
			}
			c[string(name)] = int64(order.Uint64(e[dataOff:]))
		}
		off += length
	}
	return c, nil
}

// ErrNoJVM is returned by Find when no process of the list has an
// hsperfdata file: not a HotSpot JVM, or one run with -XX:-UsePerfData or
// another java.io.tmpdir.
var ErrNoJVM = errors.New("no hsperfdata file for any of the processes (not a HotSpot JVM, -XX:-UsePerfData, or another java.io.tmpdir)")

// Find returns the hsperfdata file of the first of pids that has one in
// tmp/hsperfdata_*/ (tmp: the JVM's java.io.tmpdir, "" for os.TempDir).
func Find(tmp string, pids []int) (string, error) {
	if tmp == "" {
		tmp = os.TempDir()
	}
	for _, pid := range pids {
		m, _ := filepath.Glob(filepath.Join(tmp, "hsperfdata_*", strconv.Itoa(pid)))
		if len(m) > 0 {
			return m[0], nil
		}
	}
	return "", ErrNoJVM
}

// Read parses the counters of the hsperfdata file at path.
func Read(path string) (Counters, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// CompileSeconds is the time the JIT compiler threads have spent compiling
// since the JVM started (java.ci.totalTime / sun.os.hrt.frequency), summed
// over the threads: a rate of 1 s per second is one core busy compiling.
func (c Counters) CompileSeconds() (float64, error) {
	t, ok := c["java.ci.totalTime"]
	if !ok {
		return 0, errors.New("hsperfdata: no java.ci.totalTime counter")
	}
	f, ok := c["sun.os.hrt.frequency"]
	if !ok || f <= 0 {
		return 0, errors.New("hsperfdata: no sun.os.hrt.frequency counter")
	}
	return float64(t) / float64(f), nil
}

// Encode renders counters as an hsperfdata file (version 2.0, in order's
// byte order) that Parse reads back: for fakes of a JVM in tests.
func Encode(c Counters, order binary.ByteOrder) []byte {
	b := make([]byte, prologueSize)
	binary.BigEndian.PutUint32(b, magic)
	if order == binary.LittleEndian {
		b[4] = 1
	}
	b[5], b[7] = 2, 1
	names := make([]string, 0, len(c))
	for n := range c {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		nameLen := (len(n) + 1 + 7) &^ 7 // NUL-terminated, padded to 8
		length := entryHeader + 4 + nameLen + 8
		e := make([]byte, length)
		order.PutUint32(e, uint32(length))
		order.PutUint32(e[4:], entryHeader+4)
		e[12], e[14], e[15] = 'J', 1, 3
		order.PutUint32(e[16:], uint32(entryHeader+4+nameLen))
		copy(e[entryHeader+4:], n)
		order.PutUint64(e[entryHeader+4+nameLen:], uint64(c[n]))
		b = append(b, e...)
	}
	order.PutUint32(b[8:], uint32(len(b)))
	order.PutUint32(b[24:], prologueSize)
	order.PutUint32(b[28:], uint32(len(names)))
	return b
}
