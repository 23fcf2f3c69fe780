// Package runstate keeps the state directory of a run (run-comparison.sh):
// one session holds it at a time (Claim), a session killed with kill -9 is
// cleaned up after by the next (Clean: what it started is stopped by its
// recorded identity, what it wrote is removed), and a session that ends
// stops what it recorded and deletes it (Stop, Release).
//
// The directory holds pids/*.pid (the run's own processes: the sampler,
// PostgreSQL), PRODUCT/pids/*.pid (each product's), tmpdirs (directories
// made outside it, one a line), owner (the holding session's pidfile) and
// lock (flock, held only around a claim or a release: a lock held for the
// run would be inherited by every process it starts).
// docs/design-reference.md#the-scripts, resumable runs.
//
// A Docker engine of scripts/lib/dockerd.sh has a state directory of its
// own, claimed, cleaned, stopped and released the same way (engine.go).
//
// Left checks a product adapter's own state directory after its down
// (scripts/lib/adapter.sh): what it recorded that is still there.
package runstate

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Claim makes dir the state of the session whose process is owner (the
// shell running the run): it creates dir (0700, this user's, never a
// symlink) and records owner in dir/owner; it fails when a live session
// holds dir. A session that did not finish is said (say) and left for Clean.
func Claim(dir string, owner int, say func(string)) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("run state %s is not a directory of this user", dir)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	return locked(dir, func() error {
		ownerFile := filepath.Join(dir, "owner")
		if PidfileCurrent(ownerFile) {
			pid, _, _ := readPidfile(ownerFile)
			return fmt.Errorf("run state %s is held by a live session (pid %d): one run id runs once at a time", dir, pid)
		}
		if pid, _, err := readPidfile(ownerFile); err == nil {
			say(fmt.Sprintf("an earlier session (pid %d) did not finish: cleaning what it left", pid))
		}
		return WritePidfile(ownerFile, owner)
	})
}

// Release deletes dir, which the calling session holds; it refuses while
// anything is mounted under it (an engine's layers: Stop unmounts them),
// where deleting would reach into the mounts.
func Release(dir string) error {
	points, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	if len(points) > 0 {
		return fmt.Errorf("not deleting %s: still mounted under it: %s", dir, strings.Join(points, " "))
	}
	return locked(dir, func() error { return os.RemoveAll(dir) })
}

// locked runs f holding dir/lock.
func locked(dir string, f func() error) error {
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	return f()
}

// Stop stops a Docker engine of dir or of a directory in it (one that the
// file "engine" marks: stopEngine), what the pidfiles in dir record, the
// products' first, then the run's own (the sampler, PostgreSQL), and removes
// the directories dir/tmpdirs lists. Each thing done is said (say).
func Stop(dir string, say func(string)) error {
	var errs []error
	for _, e := range engines(dir) {
		errs = append(errs, stopEngine(e, say))
	}
	products, _ := filepath.Glob(filepath.Join(dir, "*", "pids", "*.pid"))
	own, _ := filepath.Glob(filepath.Join(dir, "pids", "*.pid"))
	for _, f := range slices.Concat(products, own) {
		errs = append(errs, StopLeftover(f, say))
	}
	dirs, err := lines(filepath.Join(dir, "tmpdirs"))
	errs = append(errs, err)
	for _, d := range dirs {
		if _, err := os.Lstat(d); err != nil {
			continue
		}
		size := du(d)
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
			continue
		}
		say(fmt.Sprintf("removed %s (%s)", d, size))
	}
	return errors.Join(errs...)
}

// Clean clears what a killed session left in dir and runDir: it finds a
// PostgreSQL it started but did not live to record, stops every recorded
// process and a Docker engine and removes its directories (Stop), removes
// the files in dir but owner and lock, and in runDir ("" = none) the temp
// files of unfinished writes (.NAME.tmp-*, internal/atomicfile; NAME.tmp)
// and empty sample files.
func Clean(dir, runDir string, say func(string)) error {
	if err := findPostgres(dir, say); err != nil {
		return err
	}
	if err := Stop(dir, say); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var left, names []string
	for _, e := range entries {
		if e.Name() != "owner" && e.Name() != "lock" {
			left, names = append(left, filepath.Join(dir, e.Name())), append(names, e.Name())
		}
	}
	if len(left) > 0 {
		var size int64
		for _, p := range left {
			size += bytesUnder(p)
		}
		for _, p := range left {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		}
		say(fmt.Sprintf("removed the earlier session's files in %s (%s): %s", dir, human(size), strings.Join(names, " ")))
	}
	if runDir == "" {
		return nil
	}
	return removeUnfinished(runDir, say)
}

// findPostgres records, for Stop, the PostgreSQL server of each directory
// dir/tmpdirs lists that a session killed mid-start never recorded: the
// pid of its data/postmaster.pid, while that process runs in that data
// directory.
func findPostgres(dir string, say func(string)) error {
	pidfile := filepath.Join(dir, "pids", "postgres.pid")
	if _, err := os.Stat(pidfile); err == nil {
		return nil
	}
	dirs, err := lines(filepath.Join(dir, "tmpdirs"))
	if err != nil {
		return err
	}
	for _, d := range dirs {
		data := filepath.Join(d, "data")
		pid, _, err := readPidfile(filepath.Join(data, "postmaster.pid"))
		if err != nil || pid == 0 || !Running(pid) {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd"); err != nil || cwd != data {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(pidfile), 0o700); err != nil {
			return err
		}
		if err := WritePidfile(pidfile, pid); err != nil {
			return err
		}
		say(fmt.Sprintf("found PostgreSQL (pid %d) by its directory %s", pid, d))
	}
	return nil
}

// removeUnfinished removes under runDir what an interrupted write left.
func removeUnfinished(runDir string, say func(string)) error {
	err := filepath.WalkDir(runDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		unfinished := strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-") || strings.HasSuffix(name, ".tmp")
		if !unfinished && strings.HasPrefix(name, "samples-") && strings.HasSuffix(name, ".jsonl") {
			fi, err := d.Info()
			unfinished = err == nil && fi.Size() == 0
		}
		if !unfinished {
			return nil
		}
		if err := os.Remove(path); err != nil {
			return err
		}
		say("removed the unfinished write " + path)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// lines are the non-empty lines of a file; none when it does not exist.
func lines(path string) ([]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// du is the size of what is under path, in words.
func du(path string) string { return human(bytesUnder(path)) }

// bytesUnder sums the sizes of the regular files under path.
func bytesUnder(path string) int64 {
	var n int64
	_ = filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// human is a size in bytes as "512 B", "1.5 KiB", "41.2 MiB", "1.1 GiB".
func human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for ; v >= unit && i < 2; i++ {
		v /= unit
	}
	return fmt.Sprintf("%.1f %s", v, []string{"KiB", "MiB", "GiB"}[i])
}
