package placement

import (
	"slices"
	"strings"
	"testing"
)

// set parses a list the test knows to be good.
func set(t *testing.T, list string) Set {
	t.Helper()
	if list == "" {
		return Set{}
	}
	s, err := Parse(list)
	if err != nil {
		t.Fatalf("Parse(%q): %v", list, err)
	}
	return s
}

// TestParse: a list as taskset -c takes it prints as the kernel writes it;
// anything else is an error.
func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in, want string // want "": an error
		n        int
	}{
		{"3", "3", 1},
		{"0-2", "0-2", 3},
		{"0,2", "0,2", 2},
		{"5,0-2", "0-2,5", 4},
		{"0,1,2,5", "0-2,5", 4},                      // adjacent CPUs merge into a range
		{"0-3,2-5", "0-5", 6},                        // overlapping ranges merge
		{"0-1,2-3", "0-3", 4},                        // touching ranges merge
		{"3-3", "3", 1},                              // a range of one
		{"1,1,1", "1", 1},                            // duplicates
		{"007,010", "7,10", 2},                       // leading zeros, decimal
		{"0-4000000000", "0-4000000000", 4000000001}, // never expanded
		{"", "", 0},
		{"1-0", "", 0}, // backwards
		{"a", "", 0},
		{"1,", "", 0},
		{",1", "", 0},
		{"1-", "", 0},
		{"-1", "", 0},
		{"1-2-3", "", 0},
		{"1 2", "", 0},
		{" 1", "", 0},
		{"+1", "", 0},
		{"1;2", "", 0},
		{"99999999999999999999", "", 0}, // beyond int
	} {
		s, err := Parse(tt.in)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("Parse(%q) = %q, want an error", tt.in, s)
		case tt.want == "" && !strings.Contains(err.Error(), "not a CPU list"):
			t.Errorf("Parse(%q): error %q does not say it is not a CPU list", tt.in, err)
		case tt.want != "" && err != nil:
			t.Errorf("Parse(%q): %v", tt.in, err)
		case tt.want != "" && (s.String() != tt.want || s.Len() != tt.n):
			t.Errorf("Parse(%q) = %q with %d CPUs, want %q with %d", tt.in, s, s.Len(), tt.want, tt.n)
		}
	}
}

func TestSetOps(t *testing.T) {
	for _, tt := range []struct {
		a, b    string
		both    string // a ∩ b
		outside int    // lowest CPU of a not in b; -1: none
	}{
		{"0-3", "2-5", "2-3", 0},
		{"2-5", "0-3", "2-3", 4},
		{"0-7", "0-7", "0-7", -1},
		{"1,3", "0-3", "1,3", -1},
		{"0-3", "0,2", "0,2", 1},
		{"0-1,4-5", "1-4", "1,4", 0},
		{"1-2,5", "0-3", "1-2", 5},
		{"0,2,4", "1,3,5", "", 0},
		{"9", "0-3", "", 9},
		{"", "0-3", "", -1},
		{"0-3", "", "", 0},
	} {
		a, b := set(t, tt.a), set(t, tt.b)
		if got := a.Intersect(b).String(); got != tt.both {
			t.Errorf("%q ∩ %q = %q, want %q", tt.a, tt.b, got, tt.both)
		}
		c, ok := a.FirstOutside(b)
		if want := tt.outside >= 0; ok != want || (ok && c != tt.outside) {
			t.Errorf("%q.FirstOutside(%q) = %d, %v; want %d", tt.a, tt.b, c, ok, tt.outside)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, tt := range []struct {
		in        string
		n         int
		low, high string
	}{
		{"0-7", 6, "0-5", "6-7"},
		{"0-3", 3, "0-2", "3"},
		{"0-1,4-7", 3, "0-1,4", "5-7"},
		{"0-1,4-7", 2, "0-1", "4-7"},
		{"0,2,4,6", 1, "0", "2,4,6"},
		{"0-3", 0, "", "0-3"},
		{"0-3", 4, "0-3", ""},
	} {
		low, high := set(t, tt.in).Split(tt.n)
		if low.String() != tt.low || high.String() != tt.high {
			t.Errorf("%q.Split(%d) = %q, %q; want %q, %q", tt.in, tt.n, low, high, tt.low, tt.high)
		}
	}
}

func TestContainsAndCPUs(t *testing.T) {
	s := set(t, "0-2,5")
	if got := s.CPUs(); !slices.Equal(got, []int{0, 1, 2, 5}) {
		t.Errorf("CPUs() = %v, want [0 1 2 5]", got)
	}
	for cpu, want := range map[int]bool{0: true, 2: true, 3: false, 5: true, 6: false, -1: false} {
		if s.Contains(cpu) != want {
			t.Errorf("Contains(%d) = %v, want %v", cpu, !want, want)
		}
	}
	if !(Set{}).Empty() || s.Empty() || (Set{}).String() != "" || (Set{}).Len() != 0 {
		t.Error("the zero Set is empty and prints as \"\"; a parsed one is not empty")
	}
}

func TestParseStatus(t *testing.T) {
	for _, tt := range []struct{ name, in, want, err string }{
		{"status", "Name:\tbash\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed:\t1\n", "0-1", ""},
		{"spaces", "Cpus_allowed_list:   0,2-3  \n", "0,2-3", ""},
		{"no newline at end", "Name:\tx\nCpus_allowed_list:\t7", "7", ""},
		{"missing", "Name:\tbash\nCpus_allowed:\t3\n", "", "no Cpus_allowed_list line"},
		{"bad list", "Cpus_allowed_list:\tx\n", "", "not a CPU list"},
	} {
		s, err := ParseStatus(strings.NewReader(tt.in))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.err)
			}
		} else if err != nil || s.String() != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.name, s, err, tt.want)
		}
	}
}

// TestAllowed reads this process's real list: it parses and holds a CPU.
func TestAllowed(t *testing.T) {
	s, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() < 1 {
		t.Fatalf("Allowed() = %q: no CPU", s)
	}
	t.Logf("this process may use CPUs %s (%d)", s, s.Len())
}
