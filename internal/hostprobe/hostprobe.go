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
	"slices"
	"sync"
	"time"
)

// ErrUnsupported: this platform has no per-thread CPU clock.
var ErrUnsupported = errors.New("no per-thread CPU clock on this platform")

const (
	hashBytes   = 32 << 10 // hashed hashRounds times
	hashRounds  = 24
	tableWords  = 2 << 20 // 8 MiB of uint32
	memReads    = 8000    // dependent random reads over the table
	tableMask   = tableWords - 1
	xorshiftSet = 2463534242
)

// Probe holds the work's data; one goroutine at a time may Run it.
type Probe struct {
	buf  []byte
	tab  []uint32
	sink uint64 // keeps the compiler from dropping the work
}

// New allocates and fills the probe's data (8 MiB), the same every time.
func New() *Probe {
	p := &Probe{buf: make([]byte, hashBytes), tab: make([]uint32, tableWords)}
	for i := range p.buf {
		p.buf[i] = byte(i * 31)
	}
	x := uint32(xorshiftSet)
	for i := range p.tab {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		p.tab[i] = x
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

// chase reads the table at random, each read's address depending on the
// one before, so no read can start before the previous one ends.
func (p *Probe) chase() {
	i := uint32(1)
	for k := range uint32(memReads) {
		i = p.tab[i&tableMask] ^ k
	}
	p.sink += uint64(i)
}

// Series runs a probe every period in a goroutine of its own, from Start
// until Stop.
type Series struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	runs []time.Duration
	err  error
}

// Start runs p at once, then every period, until Stop.
func Start(p *Probe, every time.Duration) *Series {
	s := &Series{stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop(p, every)
	return s
}

func (s *Series) loop(p *Probe, every time.Duration) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		d, err := p.Run()
		s.mu.Lock()
		if err != nil {
			s.err = err
			s.mu.Unlock()
			return
		}
		s.runs = append(s.runs, d)
		s.mu.Unlock()
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// Stop ends the series and returns its runs' CPU times in the order run,
// or the error that ended it (ErrUnsupported where there is no thread CPU
// clock).
func (s *Series) Stop() ([]time.Duration, error) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.runs), s.err
}

// Median is the median of runs in microseconds (the mean of the middle two
// for an even count); false for none.
func Median(runs []time.Duration) (float64, bool) {
	if len(runs) == 0 {
		return 0, false
	}
	s := slices.Clone(runs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + m) / 2
	}
	return float64(m) / float64(time.Microsecond), true
}
