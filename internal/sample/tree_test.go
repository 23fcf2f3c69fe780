package sample

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeProc is one process of a fake /proc tree.
type fakeProc struct {
	pid, ppid, pgrp int
	comm            string
	cpu, child      uint64 // utime+stime, cutime+cstime (ticks; split 2:1 into user and system)
	threads         int
	start           uint64 // ticks since boot
	rssPages        int64
	pssKB           int64 // -1 = smaps_rollup unreadable
	cmdline         string
}

// writeFakeProc replaces dir's content with a /proc snapshot.
func writeFakeProc(t *testing.T, dir string, uptime float64, procs []fakeProc) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("uptime", fmt.Sprintf("%.2f 1234.56\n", uptime))
	write("stat", "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 100 0 50 800 50 0 0 0 0 0\n")
	for _, p := range procs {
		d := filepath.Join(dir, fmt.Sprint(p.pid))
		os.Mkdir(d, 0o755)
		u, s := p.cpu*2/3, p.cpu-p.cpu*2/3
		cu, cs := p.child*2/3, p.child-p.child*2/3
		stat := fmt.Sprintf("%d (%s) S %d %d %d 0 -1 4194560 100 0 0 0 %d %d %d %d 20 0 %d 0 %d 123456 %d 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
			p.pid, p.comm, p.ppid, p.pgrp, p.pgrp, u, s, cu, cs, p.threads, p.start, p.rssPages)
		write(fmt.Sprint(p.pid)+"/stat", stat)
		write(fmt.Sprint(p.pid)+"/cmdline", strings.ReplaceAll(p.cmdline, " ", "\x00")+"\x00")
		if p.pssKB >= 0 {
			write(fmt.Sprint(p.pid)+"/smaps_rollup", fmt.Sprintf("00400000-7ffe [rollup]\nRss:    %d kB\nPss:    %d kB\nPss_Anon:  1 kB\n", p.rssPages*4, p.pssKB))
		}
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name, line string
		ok         bool
		want       Proc
		comm       string
	}{
		{"plain", "42 (java) S 1 42 42 0 -1 0 0 0 0 0 300 100 20 10 20 0 57 0 9000 1 2500 18446744073709551615", true,
			Proc{PID: 42, PPID: 1, PGRP: 42, State: 'S', CPU: 400, ChildCPU: 30, Threads: 57, Start: 9000, RSSPages: 2500}, "java"},
		{"comm with spaces and parens", "7 (a) (b c)) R 3 7 7 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 5 1 6", true,
			Proc{PID: 7, PPID: 3, PGRP: 7, State: 'R', CPU: 3, ChildCPU: 7, Threads: 1, Start: 5, RSSPages: 6}, "a) (b c)"},
		{"zombie", "9 (x) Z 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0", true,
			Proc{PID: 9, PPID: 1, PGRP: 9, State: 'Z', Threads: 1, Start: 5}, "x"},
		{"no comm", "7 a R 3", false, Proc{}, ""},
		{"empty", "", false, Proc{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Proc
			ok := parseStat([]byte(tt.line), tt.want.PID, &p)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if got := p.Comm(); got != tt.comm {
				t.Errorf("comm %q, want %q", got, tt.comm)
			}
			p.comm, p.commLen = [16]byte{}, 0
			if p != tt.want {
				t.Errorf("got  %+v\nwant %+v", p, tt.want)
			}
		})
	}
}

// TestTreeCPU checks the interval CPU of a tree whose children start, exit
// (reaped into the parent's cutime) and get orphaned between scans.
func TestTreeCPU(t *testing.T) {
	dir := t.TempDir()
	unrelated := fakeProc{pid: 99, ppid: 1, pgrp: 99, comm: "other", cpu: 500, threads: 1, start: 10, rssPages: 1000, pssKB: 100}
	snapshots := []struct {
		uptime    float64
		procs     []fakeProc
		wantTicks uint64
		wantProcs int
		wantRSS   int64 // pages
		wantPSS   int64 // kB, 0 = not all readable
	}{
		{100, []fakeProc{
			{pid: 10, ppid: 1, pgrp: 10, comm: "root", cpu: 100, threads: 10, start: 100, rssPages: 100, pssKB: 300},
			{pid: 11, ppid: 10, pgrp: 10, comm: "child", cpu: 50, threads: 2, start: 200, rssPages: 10, pssKB: 30},
			{pid: 12, ppid: 10, pgrp: 10, comm: "child", cpu: 20, threads: 1, start: 300, rssPages: 10, pssKB: 30},
			unrelated,
		}, 0, 3, 120, 360},
		// 11 exited after 10 more ticks and was reaped (root's cutime +60);
		// 13 started within the interval; root +30, 12 +5: 30+10+5+7 = 52.
		{101, []fakeProc{
			{pid: 10, ppid: 1, pgrp: 10, comm: "root", cpu: 130, child: 60, threads: 10, start: 100, rssPages: 100, pssKB: 300},
			{pid: 12, ppid: 10, pgrp: 10, comm: "child", cpu: 25, threads: 1, start: 300, rssPages: 10, pssKB: 30},
			{pid: 13, ppid: 10, pgrp: 10, comm: "new", cpu: 7, threads: 1, start: 10050, rssPages: 5, pssKB: -1},
			unrelated,
		}, 52, 3, 115, 0},
		// 13 was orphaned (re-parented to 1, out of the tree): nothing is
		// subtracted for it since root's cutime did not grow; root +10, 12 +5.
		{102, []fakeProc{
			{pid: 10, ppid: 1, pgrp: 10, comm: "root", cpu: 140, child: 60, threads: 10, start: 100, rssPages: 100, pssKB: 300},
			{pid: 12, ppid: 10, pgrp: 10, comm: "child", cpu: 30, threads: 1, start: 300, rssPages: 10, pssKB: 30},
			{pid: 13, ppid: 1, pgrp: 10, comm: "new", cpu: 9, threads: 1, start: 10050, rssPages: 5, pssKB: 10},
			unrelated,
		}, 15, 2, 110, 330},
		// pid 12 was reused by a new process started in the interval (the old
		// one was reaped: cutime +35 = its 30 + 5 more): 0 + 5 + 4 = 9.
		{103, []fakeProc{
			{pid: 10, ppid: 1, pgrp: 10, comm: "root", cpu: 140, child: 95, threads: 10, start: 100, rssPages: 100, pssKB: 300},
			{pid: 12, ppid: 10, pgrp: 10, comm: "reused", cpu: 4, threads: 1, start: 10290, rssPages: 10, pssKB: 30},
			unrelated,
		}, 9, 2, 110, 330},
	}
	tree := NewTree(100, true)
	table := NewProcTable(dir)
	table.PageSize = 4096
	for i, s := range snapshots {
		writeFakeProc(t, dir, s.uptime, s.procs)
		if err := table.Scan(); err != nil {
			t.Fatal(err)
		}
		st := tree.Measure(table, []int{10})
		if st.CPUTicks != s.wantTicks || st.Processes != s.wantProcs || st.RSSBytes != s.wantRSS*4096 || st.PSSBytes != s.wantPSS*1024 {
			t.Errorf("scan %d: ticks %d procs %d rss %d pss %d, want %d %d %d %d", i,
				st.CPUTicks, st.Processes, st.RSSBytes, st.PSSBytes, s.wantTicks, s.wantProcs, s.wantRSS*4096, s.wantPSS*1024)
		}
		if st.Root == nil || st.Root.Comm() != "root" {
			t.Errorf("scan %d: root %v", i, st.Root)
		}
	}
}

func TestTreeGroupAndMissingRoot(t *testing.T) {
	dir := t.TempDir()
	writeFakeProc(t, dir, 50, []fakeProc{
		{pid: 20, ppid: 1, pgrp: 20, comm: "leader", cpu: 1, threads: 3, start: 1, rssPages: 1, pssKB: 4},
		{pid: 21, ppid: 1, pgrp: 20, comm: "daemonised", cpu: 1, threads: 4, start: 2, rssPages: 2, pssKB: 8},
		{pid: 22, ppid: 21, pgrp: 20, comm: "worker", cpu: 1, threads: 5, start: 3, rssPages: 3, pssKB: 12},
		{pid: 30, ppid: 1, pgrp: 30, comm: "other", cpu: 1, threads: 1, start: 4, rssPages: 4, pssKB: 16},
	})
	table := NewProcTable(dir)
	if err := table.Scan(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		group       int
		roots       []int
		wantProcs   int
		wantThreads int64
	}{
		{"tree only", 0, []int{20}, 1, 3},
		{"tree and group", 20, []int{20}, 3, 12},
		{"missing root", 0, []int{77}, 0, 0},
		{"two roots", 0, []int{21, 30}, 3, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTree(100, false)
			tr.Group = tt.group
			st := tr.Measure(table, tt.roots)
			if st.Processes != tt.wantProcs || st.Threads != tt.wantThreads || st.PSSBytes != 0 {
				t.Errorf("procs %d threads %d pss %d, want %d %d 0", st.Processes, st.Threads, st.PSSBytes, tt.wantProcs, tt.wantThreads)
			}
		})
	}
}

func TestMatchExcludesKernelAndCaches(t *testing.T) {
	dir := t.TempDir()
	procs := []fakeProc{
		{pid: 2, ppid: 0, pgrp: 0, comm: "kthreadd", start: 1, pssKB: -1},
		{pid: 40, ppid: 2, pgrp: 0, comm: "kworker", start: 2, pssKB: -1, cmdline: "hydra-lookalike"},
		{pid: 41, ppid: 1, pgrp: 41, comm: "hydra", start: 3, threads: 9, rssPages: 10, pssKB: 4, cmdline: "/usr/bin/hydra serve all"},
		{pid: 42, ppid: 41, pgrp: 41, comm: "helper", start: 4, threads: 1, rssPages: 1, pssKB: 4, cmdline: "helper"},
		{pid: 43, ppid: 1, pgrp: 43, comm: "bash", start: 5, threads: 1, rssPages: 1, pssKB: 4, cmdline: "bash"},
	}
	writeFakeProc(t, dir, 10, procs)
	src, err := newProcSource(Selector{Kind: SelectMatch, Value: `hydra serve`}, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	table := NewProcTable(dir)
	table.Scan()
	src.resolve(table)
	if len(src.roots) != 1 || src.roots[0] != 41 {
		t.Fatalf("roots %v, want [41]", src.roots)
	}
	if st := src.tree.Measure(table, src.roots); st.Processes != 2 || st.Root.Comm() != "hydra" {
		t.Errorf("processes %d root %v, want 2 and hydra", st.Processes, st.Root)
	}
	// An exec changes the comm: the command line is read again.
	procs[2].comm, procs[2].cmdline = "sh", "sh -c true"
	writeFakeProc(t, dir, 11, procs)
	table.Scan()
	src.resolve(table)
	if len(src.roots) != 0 {
		t.Errorf("roots %v after exec, want none", src.roots)
	}
}

// BenchmarkTick is the per-tick cost of the process sources: one /proc scan
// and one tree (the test process) measured, with and without PSS. At one
// tick a second, 10 ms/op would be 1% of one core.
func BenchmarkTick(b *testing.B) {
	for _, pss := range []bool{false, true} {
		b.Run(fmt.Sprintf("pss=%v", pss), func(b *testing.B) {
			table, tree := NewProcTable(""), NewTree(100, pss)
			roots := []int{os.Getpid()}
			b.ReportAllocs()
			for b.Loop() {
				if err := table.Scan(); err != nil {
					b.Fatal(err)
				}
				tree.Measure(table, roots)
			}
		})
	}
}

// TestProcSourceGone checks that a tree whose root exits keeps its name,
// records 0 processes and warns once.
func TestProcSourceGone(t *testing.T) {
	dir := t.TempDir()
	root := fakeProc{pid: 50, ppid: 1, pgrp: 50, comm: "keycloak", cpu: 10, threads: 40, start: 5, rssPages: 100, pssKB: -1}
	var stderr strings.Builder
	src, err := newProcSource(Selector{Kind: SelectPID, Value: "50"}, 100, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	table := NewProcTable(dir)
	var got []string
	for i, procs := range [][]fakeProc{{root}, {root}, nil, nil} {
		writeFakeProc(t, dir, float64(10+i), procs)
		table.Scan()
		tk := tick{dt: 1, hz: 100, procs: table, baseline: i == 0}
		for _, r := range src.collect(context.Background(), &tk, nil) {
			got = append(got, fmt.Sprintf("%s/%d", r.Source, r.Processes))
		}
	}
	want := "process:keycloak/1 process:keycloak/0 process:keycloak/0"
	if strings.Join(got, " ") != want {
		t.Errorf("records %v, want %s", got, want)
	}
	if strings.Count(stderr.String(), "no process") != 1 {
		t.Errorf("stderr %q, want one warning", stderr.String())
	}
}
