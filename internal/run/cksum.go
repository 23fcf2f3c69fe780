package run

import (
	"fmt"
	"path/filepath"
)

// cksumTable is CRC-32 with the polynomial 0x04C11DB7, most significant bit
// first, as POSIX cksum computes it.
var cksumTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04C11DB7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// Cksum is the checksum POSIX cksum prints for data: the CRC of the bytes,
// then of their length (least significant byte first, no zero bytes beyond
// it), complemented.
func Cksum(data []byte) uint32 {
	var crc uint32
	add := func(b byte) { crc = crc<<8 ^ cksumTable[byte(crc>>24)^b] }
	for _, b := range data {
		add(b)
	}
	for n := len(data); n > 0; n >>= 8 {
		add(byte(n))
	}
	return ^crc
}

// StateDir is the state directory of the run runID whose results are
// runDir: TMP/idpbench-run-ID-<cksum of runDir>, where tmp is
// IDPBENCH_TMP (docs/design-reference.md#the-scripts, resumable runs).
func StateDir(tmp, runID, runDir string) string {
	return filepath.Join(tmp, fmt.Sprintf("idpbench-run-%s-%d", runID, Cksum([]byte(runDir))))
}
