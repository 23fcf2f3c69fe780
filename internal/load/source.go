package load

import (
	"sync/atomic"

	"github.com/idpbench/idpbench/internal/pool"
	"github.com/idpbench/idpbench/internal/schema"
)

// source hands one worker its credentials.
type source interface {
	// next returns the credential for the next request; ok is false when a
	// consume pool has run dry.
	next() (cred string, ok bool)
	// rotate hands over the refresh token a successful response returned.
	rotate(token string)
}

// credPool is a pool shared by all workers, with its use counters.
type credPool struct {
	p     *pool.Pool
	mode  string
	taken atomic.Int64  // consume: credentials taken; chain: chains seeded
	seen  []atomic.Bool // reuse: which credentials were sent at least once
}

func newCredPool(p *pool.Pool, mode string) *credPool {
	if p == nil {
		return nil
	}
	cp := &credPool{p: p, mode: mode}
	if mode == PoolReuse {
		cp.seen = make([]atomic.Bool, len(p.Creds))
	}
	return cp
}

// source returns worker i's view of the pool (of workers in all).
func (cp *credPool) source(i, workers int) source {
	switch {
	case cp == nil:
		return emptySource{}
	case cp.mode == PoolConsume:
		return consumeSource{cp}
	case cp.mode == PoolChain:
		cp.taken.Add(1)
		return &chainSource{cur: cp.p.Creds[i]}
	}
	return &reuseSource{cp: cp, idx: sliceOf(i, workers, len(cp.p.Creds))}
}

// sliceOf returns the pool indexes of worker i: a contiguous share when the
// pool has at least one credential per worker, else the single i mod n.
func sliceOf(i, workers, n int) []int {
	if n < workers {
		return []int{i % n}
	}
	lo, hi := i*n/workers, (i+1)*n/workers
	idx := make([]int, 0, hi-lo)
	for j := lo; j < hi; j++ {
		idx = append(idx, j)
	}
	return idx
}

// used is the PoolUse.Used figure.
func (cp *credPool) used() int64 {
	if cp.mode != PoolReuse {
		return min(cp.taken.Load(), int64(len(cp.p.Creds)))
	}
	var n int64
	for i := range cp.seen {
		if cp.seen[i].Load() {
			n++
		}
	}
	return n
}

// use describes the pool for the step record.
func (cp *credPool) use() *schema.PoolUse {
	if cp == nil {
		return nil
	}
	return &schema.PoolUse{
		File: cp.p.Name, Kind: cp.p.Header["kind"], Mode: cp.mode, Size: len(cp.p.Creds),
		Used: cp.used(), Minted: cp.p.Header["minted"], Expires: cp.p.Header["expires"],
	}
}

type emptySource struct{}

func (emptySource) next() (string, bool) { return "", true }
func (emptySource) rotate(string)        {}

type reuseSource struct {
	cp  *credPool
	idx []int
	pos int
}

func (s *reuseSource) next() (string, bool) {
	j := s.idx[s.pos]
	s.pos = (s.pos + 1) % len(s.idx)
	if !s.cp.seen[j].Load() {
		s.cp.seen[j].Store(true)
	}
	return s.cp.p.Creds[j], true
}

func (s *reuseSource) rotate(string) {}

type consumeSource struct{ cp *credPool }

func (s consumeSource) next() (string, bool) {
	j := s.cp.taken.Add(1) - 1
	if j >= int64(len(s.cp.p.Creds)) {
		return "", false
	}
	return s.cp.p.Creds[j], true
}

func (consumeSource) rotate(string) {}

// chainSource refreshes with the token its last successful response
// returned; a response without a refresh token keeps the current one.
type chainSource struct{ cur string }

func (s *chainSource) next() (string, bool) { return s.cur, true }

func (s *chainSource) rotate(token string) {
	if token != "" {
		s.cur = token
	}
}
