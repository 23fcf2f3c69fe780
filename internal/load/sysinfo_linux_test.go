package load

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseSchedstat(t *testing.T) {
	tests := []struct {
		in   string
		want schedTimes
		ok   bool
	}{
		{"1187060092 42966 12\n", schedTimes{run: 1187060092, wait: 42966}, true},
		{"0 0 0", schedTimes{}, true},
		{"12 34", schedTimes{}, false},                   // a kernel without the timeslice count
		{"12 34 5 6", schedTimes{}, false},               // a format this reader does not know
		{"12 -34 5", schedTimes{}, false},                // not a count
		{"", schedTimes{}, false},                        // empty
		{"9223372036854775808 1 1", schedTimes{}, false}, // beyond a time.Duration
	}
	for _, tc := range tests {
		got, ok := parseSchedstat([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseSchedstat(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// testdata/schedstat/task is a /proc/<pid>/task of two threads.
func TestReadThreadsFixture(t *testing.T) {
	got, ok := readThreads("testdata/schedstat/task")
	want := map[int]schedTimes{
		101: {run: 5 * time.Second, wait: 2 * time.Second},
		102: {run: 1000, wait: 500},
	}
	if !ok || len(got) != len(want) || got[101] != want[101] || got[102] != want[102] {
		t.Fatalf("readThreads = %v, %v; want %v", got, ok, want)
	}
	if _, ok := readThreads(filepath.Join(t.TempDir(), "absent")); ok {
		t.Error("readThreads of a missing directory: ok")
	}
	bad := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bad, "7"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "7", "schedstat"), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := readThreads(bad); ok {
		t.Error("readThreads of a malformed schedstat: ok")
	}
}

// The test process's own threads: this kernel reports schedstat (the
// driver's queue wait rests on it), and the threads' time on a CPU grows
// as the process's CPU time (getrusage) does.
func TestReadThreadsLive(t *testing.T) {
	before, ok := readThreads(selfTasks)
	if !ok {
		t.Skip("this kernel does not report /proc/self/task/*/schedstat")
	}
	// Spin until this process has used 20 ms of CPU, however busy the host.
	cpu0 := selfCPU()
	for deadline := time.Now().Add(10 * time.Second); selfCPU()-cpu0 < 20*time.Millisecond && time.Now().Before(deadline); {
	}
	used := selfCPU() - cpu0
	after, ok := readThreads(selfTasks)
	if !ok {
		t.Fatal("second reading failed")
	}
	var ran time.Duration
	for _, d := range threadDeltas(before, after) {
		ran += d.run
	}
	if used < 20*time.Millisecond || ran < used/2 {
		t.Errorf("threads ran %v while the process used %v of CPU, want at least half of it (and 20 ms used)", ran, used)
	}
}
