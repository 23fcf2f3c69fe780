package placement

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// span is the CPUs first..last.
type span struct{ first, last int }

// A Set is a set of CPUs held as the kernel writes a list: ascending,
// disjoint, non-adjacent ranges. Equal sets print alike, so lists compare
// as strings; and a set is never expanded CPU by CPU, so a list naming CPU
// 4000000000 costs no more than one naming CPU 4. The zero Set is empty.
type Set struct{ spans []span }

// Parse reads a CPU list as taskset -c takes it: CPUs and ranges separated
// by commas ("3", "0-2", "0,2", "5,0-2"), in any order, overlaps allowed. An
// empty list, a range that runs backwards and anything else is an error.
func Parse(list string) (Set, error) {
	var spans []span
	for part := range strings.SplitSeq(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := cpuNumber(lo)
		last := first
		if err == nil && isRange {
			last, err = cpuNumber(hi)
		}
		if err != nil || last < first {
			return Set{}, fmt.Errorf("%q: not a CPU list", list)
		}
		spans = append(spans, span{first, last})
	}
	return normalize(spans), nil
}

// cpuNumber is a CPU's number: decimal digits only, no sign, no space.
func cpuNumber(s string) (int, error) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, errors.New("not a CPU number")
	}
	return strconv.Atoi(s)
}

// normalize sorts spans and merges those that overlap or touch.
func normalize(spans []span) Set {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.first, b.first) })
	var out []span
	for _, s := range spans {
		if n := len(out); n > 0 && s.first <= out[n-1].last+1 {
			out[n-1].last = max(out[n-1].last, s.last)
			continue
		}
		out = append(out, s)
	}
	return Set{out}
}

// String is the set as the kernel writes it ("0-2,5"); "" when empty.
func (s Set) String() string {
	parts := make([]string, len(s.spans))
	for i, r := range s.spans {
		parts[i] = strconv.Itoa(r.first)
		if r.last != r.first {
			parts[i] += "-" + strconv.Itoa(r.last)
		}
	}
	return strings.Join(parts, ",")
}

// Empty reports whether s holds no CPU.
func (s Set) Empty() bool { return len(s.spans) == 0 }

// Len is how many CPUs s holds.
func (s Set) Len() int {
	n := 0
	for _, r := range s.spans {
		n += r.last - r.first + 1
	}
	return n
}

// CPUs lists the CPUs of s in ascending order: for sets of real CPUs
// (Allowed's), never for a list a user wrote.
func (s Set) CPUs() []int {
	var cpus []int
	for _, r := range s.spans {
		for c := r.first; c <= r.last; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// Contains reports whether s holds cpu.
func (s Set) Contains(cpu int) bool {
	_, ok := s.spanOf(cpu)
	return ok
}

// spanOf is the span of s that holds cpu.
func (s Set) spanOf(cpu int) (span, bool) {
	for _, r := range s.spans {
		if r.first <= cpu && cpu <= r.last {
			return r, true
		}
	}
	return span{}, false
}

// FirstOutside is the lowest CPU of s that o lacks; false when o holds
// every CPU of s.
func (s Set) FirstOutside(o Set) (int, bool) {
	for _, r := range s.spans {
		c := r.first
		if q, ok := o.spanOf(c); ok {
			c = q.last + 1 // o's spans never touch: the CPU after q is not in o
		}
		if c <= r.last {
			return c, true
		}
	}
	return 0, false
}

// Intersect is the CPUs both s and o hold.
func (s Set) Intersect(o Set) Set {
	var out []span
	for i, j := 0, 0; i < len(s.spans) && j < len(o.spans); {
		a, b := s.spans[i], o.spans[j]
		if lo, hi := max(a.first, b.first), min(a.last, b.last); lo <= hi {
			out = append(out, span{lo, hi})
		}
		if a.last < b.last {
			i++
		} else {
			j++
		}
	}
	return normalize(out)
}

// Split is the n lowest CPUs of s and the rest.
func (s Set) Split(n int) (low, high Set) {
	for _, r := range s.spans {
		switch size := r.last - r.first + 1; {
		case n <= 0:
			high.spans = append(high.spans, r)
		case n >= size:
			low.spans = append(low.spans, r)
			n -= size
		default:
			low.spans = append(low.spans, span{r.first, r.first + n - 1})
			high.spans = append(high.spans, span{r.first + n, r.last})
			n = 0
		}
	}
	return low, high
}

// statusPath is where the kernel says which CPUs this process may use.
const statusPath = "/proc/self/status"

// Allowed is the set of CPUs this process may use: its affinity, as
// /proc/self/status's Cpus_allowed_list says (narrowed by a taskset or a
// cgroup's cpuset; what its children inherit).
func Allowed() (Set, error) {
	f, err := os.Open(statusPath)
	if err != nil {
		return Set{}, fmt.Errorf("reading the CPUs this process may use: %w", err)
	}
	defer f.Close()
	s, err := ParseStatus(f)
	if err != nil {
		return Set{}, fmt.Errorf("reading the CPUs this process may use: %s: %w", statusPath, err)
	}
	return s, nil
}

// ParseStatus reads the Cpus_allowed_list of a /proc/PID/status file.
func ParseStatus(r io.Reader) (Set, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if list, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			return Parse(strings.TrimSpace(list))
		}
	}
	if err := sc.Err(); err != nil {
		return Set{}, err
	}
	return Set{}, errors.New("no Cpus_allowed_list line")
}
