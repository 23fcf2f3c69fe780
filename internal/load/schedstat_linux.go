package load

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// readThreads reads, for each thread of the process under tasks (a
// /proc/<pid>/task directory), its time on a CPU and its time runnable but
// queued for one since it started: fields 1 and 2 of
// /proc/<pid>/task/<tid>/schedstat, in ns (/proc/self/schedstat alone is
// one thread's). ok is false when the kernel does not report them (built
// without CONFIG_SCHED_INFO). Delay accounting (/proc/<pid>/stat's
// delayacct field) would need kernel.task_delayacct, which is off by
// default, and counts block I/O only.
func readThreads(tasks string) (threads map[int]schedTimes, ok bool) {
	dirs, err := os.ReadDir(tasks)
	if err != nil {
		return nil, false
	}
	threads = make(map[int]schedTimes, len(dirs))
	for _, d := range dirs {
		tid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(tasks, d.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited since the listing
		}
		t, ok := parseSchedstat(b)
		if !ok {
			return nil, false
		}
		threads[tid] = t
	}
	return threads, len(threads) > 0
}

// parseSchedstat reads one schedstat line: "ns on a CPU, ns runnable and
// queued, timeslices".
func parseSchedstat(b []byte) (schedTimes, bool) {
	f := bytes.Fields(b)
	if len(f) != 3 {
		return schedTimes{}, false
	}
	var ns [2]uint64
	for i := range ns {
		v, err := strconv.ParseUint(string(f[i]), 10, 63)
		if err != nil {
			return schedTimes{}, false
		}
		ns[i] = v
	}
	return schedTimes{run: time.Duration(ns[0]), wait: time.Duration(ns[1])}, true
}
