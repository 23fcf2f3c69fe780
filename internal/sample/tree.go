package sample

// TreeStats is what one process tree used at one scan.
type TreeStats struct {
	RSSBytes  int64 // sum of the members' resident sets
	PSSBytes  int64 // sum of the members' proportional sets; 0 unless PSSOK
	PSSOK     bool  // every member's PSS was readable
	Threads   int64
	Processes int
	CPUTicks  uint64 // CPU used since the previous Measure, clock ticks
	Root      *Proc  // the oldest root (for the default name); nil when the tree is empty
}

type prevProc struct {
	start, total, child uint64 // total = own + reaped children's CPU ticks
	ppid                int
}

// Tree follows one process tree (roots and all their descendants) across
// scans and turns cumulative CPU times into per-interval usage.
//
// CPU of a child that exited between two scans is not lost: when its parent
// reaps it, the kernel adds its lifetime CPU to the parent's cutime/cstime,
// so a member's total is own + reaped-children CPU. A child already counted
// in earlier intervals would then be counted twice, so its last seen total
// is subtracted from the cutime growth of its nearest surviving ancestor
// (bounded by that growth: a child reaped outside the tree subtracts nothing).
type Tree struct {
	Hz         float64 // clock ticks per second
	Group      int     // also take in processes of this process group (0 = none)
	PSS        bool    // read /proc/PID/smaps_rollup
	prev, cur  map[int]prevProc
	members    map[int]bool
	sub        map[int]uint64
	prevUptime float64
	measured   bool
}

// NewTree returns a Tree for clock ticks of hz per second.
func NewTree(hz float64, pss bool) *Tree {
	return &Tree{Hz: hz, PSS: pss, prev: map[int]prevProc{}, cur: map[int]prevProc{},
		members: map[int]bool{}, sub: map[int]uint64{}}
}

// Measure sums the tree rooted at roots in t. The first call only sets the
// CPU baseline (CPUTicks = 0).
func (tr *Tree) Measure(t *ProcTable, roots []int) TreeStats {
	tr.collect(t, roots)
	st := tr.memory(t, roots)
	st.CPUTicks = tr.cpu(t)
	tr.prev, tr.cur = tr.cur, tr.prev
	tr.prevUptime, tr.measured = t.Uptime, true
	return st
}

// collect marks the roots, their descendants and the group's members.
func (tr *Tree) collect(t *ProcTable, roots []int) {
	clear(tr.members)
	for _, pid := range roots {
		if t.Get(pid) != nil {
			tr.members[pid] = true
		}
	}
	if len(tr.members) == 0 && tr.Group == 0 {
		return
	}
	for pass := 0; pass <= len(t.Procs); pass++ { // bounded: each pass adds one generation
		added := false
		for i := range t.Procs {
			p := &t.Procs[i]
			if !tr.members[p.PID] && (tr.members[p.PPID] || (tr.Group > 0 && p.PGRP == tr.Group)) {
				tr.members[p.PID] = true
				added = true
			}
		}
		if !added {
			return
		}
	}
}

func (tr *Tree) memory(t *ProcTable, roots []int) TreeStats {
	st := TreeStats{PSSOK: tr.PSS}
	for pid := range tr.members {
		p := t.Get(pid)
		st.Processes++
		st.RSSBytes += p.RSSPages * t.PageSize
		st.Threads += p.Threads
		if st.PSSOK {
			pss, ok := t.PSS(pid)
			st.PSSBytes += pss
			st.PSSOK = ok
		}
	}
	if !st.PSSOK {
		st.PSSBytes = 0
	}
	for _, pid := range roots {
		if p := t.Get(pid); p != nil && (st.Root == nil || p.Start < st.Root.Start) {
			st.Root = p
		}
	}
	return st
}

// cpu returns the ticks used by the tree since the previous Measure and
// fills tr.cur with this scan's totals.
func (tr *Tree) cpu(t *ProcTable) uint64 {
	clear(tr.cur)
	clear(tr.sub)
	for pid := range tr.members {
		p := t.Get(pid)
		tr.cur[pid] = prevProc{start: p.Start, total: p.CPU + p.ChildCPU, child: p.ChildCPU, ppid: p.PPID}
	}
	if !tr.measured {
		return 0
	}
	for pid, pp := range tr.prev {
		if c, ok := tr.cur[pid]; !ok || c.start != pp.start {
			if a := tr.liveAncestor(pp.ppid); a > 0 {
				tr.sub[a] += pp.total
			}
		}
	}
	var sum uint64
	for pid, c := range tr.cur {
		sum += tr.delta(pid, c)
	}
	return sum
}

// delta is one live member's CPU ticks in the interval.
func (tr *Tree) delta(pid int, c prevProc) uint64 {
	pp, seen := tr.prev[pid]
	if !seen || pp.start != c.start {
		if float64(c.start)/tr.Hz >= tr.prevUptime {
			return c.total // started within the interval: all of its CPU is new
		}
		return 0 // joined the tree late: no baseline
	}
	d := sat(c.total, pp.total)
	return sat(d, min(tr.sub[pid], sat(c.child, pp.child)))
}

// liveAncestor walks the previous scan's parent links from pid to the first
// process that is still the same member now; 0 when there is none.
func (tr *Tree) liveAncestor(pid int) int {
	for hops := 0; hops < 64 && pid > 0; hops++ {
		pp, wasMember := tr.prev[pid]
		if !wasMember {
			return 0
		}
		if c, ok := tr.cur[pid]; ok && c.start == pp.start {
			return pid
		}
		pid = pp.ppid
	}
	return 0
}

// sat is a-b, or 0 when b > a.
func sat(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}
