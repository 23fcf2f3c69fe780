package sample

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// Selector kinds.
const (
	SelectPID     = "pid"
	SelectPidfile = "pidfile"
	SelectMatch   = "match"
)

// Selector picks the roots of one process tree.
type Selector struct {
	Kind  string // SelectPID, SelectPidfile or SelectMatch
	Value string // the pid, the pidfile path or the regular expression
	Name  string // record source is "process:<Name>"; "" = comm of the oldest root
}

func (s Selector) String() string { return "--" + s.Kind + " " + s.Value }

// procSource samples one process tree, re-resolving its roots every tick.
type procSource struct {
	sel     Selector
	pid     int
	re      *regexp.Regexp
	tree    *Tree
	name    string // "process:<name>", fixed once known
	exclude map[int]bool
	cache   map[int]matchEntry
	roots   []int
	gen     uint32
	stderr  io.Writer
	gone    bool // the tree was empty at the previous tick (warned)
}

// matchEntry caches whether a process's command line matched. A process
// keeps its entry while its start time and comm stay the same (an exec
// changes the comm).
type matchEntry struct {
	start uint64
	comm  string
	hit   bool
	gen   uint32
}

func newProcSource(sel Selector, hz float64, stderr io.Writer) (*procSource, error) {
	s := &procSource{sel: sel, tree: NewTree(hz, false), stderr: stderr, cache: map[int]matchEntry{}}
	if sel.Name != "" {
		s.name = "process:" + sel.Name
	}
	switch sel.Kind {
	case SelectPID:
		pid, err := strconv.Atoi(sel.Value)
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("--pid %q: not a process id", sel.Value)
		}
		s.pid = pid
	case SelectMatch:
		re, err := regexp.Compile(sel.Value)
		if err != nil {
			return nil, fmt.Errorf("--match %q: %w", sel.Value, err)
		}
		s.re = re
	case SelectPidfile:
	default:
		return nil, fmt.Errorf("unknown selector %q", sel.Kind)
	}
	return s, nil
}

// resolve sets s.roots for the scan in t.
func (s *procSource) resolve(t *ProcTable) {
	s.roots = s.roots[:0]
	switch s.sel.Kind {
	case SelectPID:
		s.roots = append(s.roots, s.pid)
	case SelectPidfile:
		if pid, err := ReadPidfile(s.sel.Value); err == nil {
			s.roots = append(s.roots, pid)
		}
	case SelectMatch:
		s.match(t)
	}
}

// match adds every process whose command line matches as a root, except the
// sampler itself and its ancestors (whose command lines hold the pattern).
func (s *procSource) match(t *ProcTable) {
	if s.exclude == nil {
		s.exclude = selfAndAncestors(t)
	}
	s.gen++
	for i := range t.Procs {
		p := &t.Procs[i]
		if s.exclude[p.PID] || p.PPID == 2 || p.PID == 2 { // 2 = kthreadd and kernel threads
			continue
		}
		e, ok := s.cache[p.PID]
		if !ok || e.start != p.Start || e.comm != string(p.comm[:p.commLen]) {
			e = matchEntry{start: p.Start, comm: p.Comm(), hit: s.re.MatchString(t.Cmdline(p.PID))}
		}
		e.gen = s.gen
		s.cache[p.PID] = e
		if e.hit {
			s.roots = append(s.roots, p.PID)
		}
	}
	for pid, e := range s.cache {
		if e.gen != s.gen {
			delete(s.cache, pid)
		}
	}
}

func selfAndAncestors(t *ProcTable) map[int]bool {
	ex := map[int]bool{}
	for pid, hops := os.Getpid(), 0; pid > 1 && hops < 64 && !ex[pid]; hops++ {
		ex[pid] = true
		p := t.Get(pid)
		if p == nil {
			break
		}
		pid = p.PPID
	}
	return ex
}

// ReadPidfile returns the pid on the first line of path: coldstart's and
// the run tool's pidfiles (a second line holds the start time), PostgreSQL's
// postmaster.pid.
func ReadPidfile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pidfile %s: first line %q is not a pid (not a process id such as 1234)", path, line)
	}
	return pid, nil
}

func (s *procSource) collect(_ context.Context, tk *tick, out []schema.Sample) []schema.Sample {
	s.resolve(tk.procs)
	s.tree.PSS = tk.pss
	st := s.tree.Measure(tk.procs, s.roots)
	if s.name == "" && st.Root != nil {
		s.name = "process:" + st.Root.Comm()
	}
	s.noteGone(st.Processes == 0)
	if s.name == "" || tk.baseline {
		return out
	}
	return append(out, treeSample(s.name, tk, st))
}

// noteGone warns once each time the tree becomes empty.
func (s *procSource) noteGone(empty bool) {
	if empty && !s.gone {
		fmt.Fprintf(s.stderr, "sampler: %s: no process (yet); recording 0 processes\n", s.sel)
	}
	s.gone = empty
}

func (s *procSource) close() {}

// treeSample turns a tree's figures into a record.
func treeSample(source string, tk *tick, st TreeStats) schema.Sample {
	return schema.Sample{
		Schema: schema.SampleV1, T: tk.now, Source: source,
		RSSBytes: st.RSSBytes, PSSBytes: st.PSSBytes, Threads: st.Threads, Processes: st.Processes,
		CPUPct: tk.cpuPct(st.CPUTicks),
	}
}

// waitPidfile waits up to d for path to hold a pid.
func waitPidfile(ctx context.Context, path string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		_, err := ReadPidfile(path)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
