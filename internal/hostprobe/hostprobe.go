// Package hostprobe measures how fast this machine's cores run right now:
// the CPU time one thread spends on a fixed piece of work. On a shared
// virtual machine the same work takes more CPU time when a neighbour shares
// the physical core or its caches. No steal figure shows that (the core was
// ours, only slower), and neither does anyone's CPU figure (the time was
// spent, only on less work), so a window measured then ran on a slower
// machine without any record saying so.
//
// The work is integer hashing (the core's arithmetic) and dependent reads at
// random over 8 MiB (its caches and memory), about 1 ms each here. Thread
// CPU time, not wall time, is measured: time the thread spent waiting for a
// core (a busy machine) does not count, so the figure is the core's speed
// and not its availability. Figures are comparable between runs of one
// binary on one machine, not between machines.
package hostprobe

import (
	"errors"
	"runtime"
	"time"
)

// ErrUnsupported: this platform has no per-thread CPU clock.
var ErrUnsupported = errors.New("no per-thread CPU clock on this platform")

const (
	hashBytes  = 32 << 10 // hashed hashRounds times
	hashRounds = 24
	tableWords = 2 << 20 // 8 MiB of uint32
	tableMask  = tableWords - 1
	pageWords  = 1024 // uint32 words in a 4 KiB page
	memReads   = 8000 // dependent reads over the table
)

// Probe holds the work's data; one goroutine at a time may Run it.
type Probe struct {
	buf  []byte
	tab  []uint32
	sink uint64 // keeps the compiler from dropping the work
}

// New allocates the probe's data: 32 KiB to hash and an 8 MiB table with a
// word written in every page, so that every page is backed by memory of its
// own (pages never written would all read one shared zero page). Cheap: a
// page fault per page, no fill.
func New() *Probe {
	p := &Probe{buf: make([]byte, hashBytes), tab: make([]uint32, tableWords)}
	for i := range p.buf {
		p.buf[i] = byte(i * 31)
	}
	for i := 0; i < tableWords; i += pageWords {
		p.tab[i] = uint32(i)
	}
	return p
}

// Run does the work once on a locked OS thread and returns the thread CPU
// time it took.
func (p *Probe) Run() (time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, err := threadCPU()
	if err != nil {
		return 0, err
	}
	p.hash()
	p.chase()
	t1, err := threadCPU()
	if err != nil {
		return 0, err
	}
	return t1 - t0, nil
}

// hash is FNV-1a over the buffer, hashRounds times.
func (p *Probe) hash() {
	h := uint64(14695981039346656037)
	for range hashRounds {
		for _, b := range p.buf {
			h ^= uint64(b)
			h *= 1099511628211
		}
	}
	p.sink += h
}

// chase reads the table at pseudo-random places, each address computed
// from the value the read before returned, so no read can start before the
// previous one ends: the latency of the caches and memory, not their
// bandwidth.
func (p *Probe) chase() {
	i := uint32(1)
	for k := range uint32(memReads) {
		i = (i*2654435761 + p.tab[i&tableMask] + k) & tableMask
	}
	p.sink += uint64(i)
}
