package sample

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// Proc is one process as read from /proc/PID/stat.
type Proc struct {
	PID, PPID, PGRP int
	State           byte     // R, S, D, Z (zombie), ...
	Start           uint64   // start time, clock ticks since boot (with PID, identifies the process)
	CPU             uint64   // utime+stime, clock ticks
	ChildCPU        uint64   // cutime+cstime of reaped children, clock ticks
	Threads         int64    // num_threads
	RSSPages        int64    // resident pages
	comm            [16]byte // TASK_COMM_LEN
	commLen         int
}

// Comm is the process's command name (at most 15 bytes).
func (p *Proc) Comm() string { return string(p.comm[:p.commLen]) }

type procKey struct {
	pid   int
	start uint64
}

func (p *Proc) key() procKey { return procKey{p.PID, p.Start} }

// ProcTable is a snapshot of every process, read straight from /proc:
// gopsutil's per-process objects re-read and re-parse several files per
// process and allocate heavily, which at one scan a second over hundreds of
// processes would cost more than the sampler's whole budget. A ProcTable is
// reused from scan to scan; its buffers grow once and are kept.
type ProcTable struct {
	Root     string  // proc mount, "/proc" unless testing
	Procs    []Proc  // in directory order
	Uptime   float64 // seconds since boot when the scan began (/proc/uptime)
	PageSize int64   // bytes per page (RSS is counted in pages)
	byPID    map[int]int
	buf      []byte
	names    []string
}

// NewProcTable returns an empty table reading from root ("" = /proc).
func NewProcTable(root string) *ProcTable {
	if root == "" {
		root = "/proc"
	}
	return &ProcTable{Root: root, PageSize: int64(os.Getpagesize()), byPID: map[int]int{}, buf: make([]byte, 4096)}
}

// Scan replaces the table with the processes running now. Processes that
// exit while being read are skipped.
func (t *ProcTable) Scan() error {
	d, err := os.Open(t.Root)
	if err != nil {
		return err
	}
	t.names, err = d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	t.Uptime = t.readUptime()
	t.Procs = t.Procs[:0]
	clear(t.byPID)
	for _, name := range t.names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		t.Procs = append(t.Procs, Proc{})
		p := &t.Procs[len(t.Procs)-1]
		if !t.readStat(pid, p) {
			t.Procs = t.Procs[:len(t.Procs)-1]
			continue
		}
		t.byPID[pid] = len(t.Procs) - 1
	}
	return nil
}

// Get returns the process with pid, or nil.
func (t *ProcTable) Get(pid int) *Proc {
	i, ok := t.byPID[pid]
	if !ok {
		return nil
	}
	return &t.Procs[i]
}

// Read reads the one process pid without a full Scan; false when it is not running.
func (t *ProcTable) Read(pid int) (Proc, bool) {
	var p Proc
	ok := t.readStat(pid, &p)
	return p, ok
}

// Threads reads the threads of process pid (/proc/PID/task/TID/stat), each
// as a Proc whose PID is the thread id and whose Comm is the thread's name;
// nil when the process is gone. Threads that exit while being read are
// skipped.
func (t *ProcTable) Threads(pid int) []Proc {
	d, err := os.ReadDir(t.pidPath(pid, "task"))
	if err != nil {
		return nil
	}
	out := make([]Proc, 0, len(d))
	for _, e := range d {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var p Proc
		if parseStat(t.readFile(t.pidPath(pid, "task/"+e.Name()+"/stat")), tid, &p) {
			out = append(out, p)
		}
	}
	return out
}

// BootID is the kernel's id of this boot (/proc/sys/kernel/random/boot_id),
// "" when it cannot be read. With a process's Start it tells that process
// from any later one given the same pid, across reboots too.
func (t *ProcTable) BootID() string {
	return string(bytes.TrimSpace(t.readFile(t.Root + "/sys/kernel/random/boot_id")))
}

// readFile reads a small /proc file into t.buf without allocating an
// *os.File (procfs files report size 0, and os.File would register each with
// the poller). It returns nil when the file cannot be read.
func (t *ProcTable) readFile(path string) []byte {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	n := 0
	for {
		if n == len(t.buf) {
			t.buf = append(t.buf, make([]byte, len(t.buf))...)
		}
		m, err := syscall.Read(fd, t.buf[n:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil
		}
		if m == 0 {
			return t.buf[:n]
		}
		n += m
	}
}

func (t *ProcTable) pidPath(pid int, file string) string {
	return t.Root + "/" + strconv.Itoa(pid) + "/" + file
}

func (t *ProcTable) readUptime() float64 {
	b := t.readFile(t.Root + "/uptime")
	f, _, _ := bytes.Cut(b, []byte(" "))
	v, _ := strconv.ParseFloat(string(f), 64)
	return v
}

func (t *ProcTable) readStat(pid int, p *Proc) bool {
	b := t.readFile(t.pidPath(pid, "stat"))
	return parseStat(b, pid, p)
}

// parseStat parses a /proc/PID/stat line. The command name sits in
// parentheses and may itself contain spaces and parentheses, so the fields
// are counted from the last ')'.
func parseStat(b []byte, pid int, p *Proc) bool {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open || closing+2 > len(b) {
		return false
	}
	p.PID = pid
	p.commLen = copy(p.comm[:], b[open+1:closing])
	var f [22]uint64 // fields after the comm: 0 = state ... 21 = rss
	rest := b[closing+2:]
	for i := 0; i < len(f) && len(rest) > 0; i++ {
		var field []byte
		field, rest, _ = bytes.Cut(rest, []byte(" "))
		if i == 0 && len(field) > 0 {
			p.State = field[0]
		} else {
			f[i] = parseUint(field)
		}
	}
	p.PPID, p.PGRP = int(f[1]), int(f[2])
	p.CPU, p.ChildCPU = f[11]+f[12], f[13]+f[14]
	p.Threads, p.Start, p.RSSPages = int64(f[17]), f[19], int64(f[21])
	return true
}

// parseUint parses a decimal field; negative or malformed fields read as 0.
func parseUint(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0
		}
		v = v*10 + uint64(c-'0')
	}
	return v
}

// PSS returns the proportional set size of pid in bytes from
// /proc/PID/smaps_rollup, and false when it cannot be read (not permitted,
// kernel without smaps_rollup, process gone).
func (t *ProcTable) PSS(pid int) (int64, bool) {
	b := t.readFile(t.pidPath(pid, "smaps_rollup"))
	i := bytes.Index(b, []byte("\nPss:"))
	if i < 0 {
		return 0, false
	}
	line, _, _ := bytes.Cut(b[i+5:], []byte("\n"))
	line = bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(line), []byte("kB")))
	if len(line) == 0 {
		return 0, false
	}
	return int64(parseUint(line)) * 1024, true
}

// Cmdline returns the command line of pid with arguments joined by spaces.
func (t *ProcTable) Cmdline(pid int) string {
	b := t.readFile(t.pidPath(pid, "cmdline"))
	b = bytes.TrimRight(b, "\x00")
	out := make([]byte, len(b))
	for i, c := range b {
		if c == 0 {
			c = ' '
		}
		out[i] = c
	}
	return string(out)
}
