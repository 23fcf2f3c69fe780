package runstate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/idpbench/idpbench/internal/sample"
)

// An engine is a Docker engine that scripts/lib/dockerd.sh started under a
// directory of its own, which the file "engine" in it marks: a containerd and
// a dockerd whose data, exec roots, sockets and pid file are under that
// directory. Its processes are known by an argument naming a path under it
// (containerd's --config, dockerd's --data-root, a shim's -address): no
// other program names it, and the shims, which containerd starts, are
// recorded nowhere; a kill -9 between a start and a record would lose a
// pidfile too. The containers' processes are the shims' descendants.

// engineMark is the file that marks an engine's directory.
const engineMark = "engine"

// The engine's programs (argv[0]'s base name).
const (
	progDockerd    = "dockerd"
	progContainerd = "containerd"
	progShim       = "containerd-shim-runc-v2"
)

// engines are the engine directories of dir: dir itself and its
// subdirectories, each when its mark is there.
func engines(dir string) []string {
	var out []string
	if _, err := os.Stat(filepath.Join(dir, engineMark)); err == nil {
		out = append(out, dir)
	}
	marks, _ := filepath.Glob(filepath.Join(dir, "*", engineMark))
	for _, m := range marks {
		out = append(out, filepath.Dir(m))
	}
	return out
}

// stopEngine stops the engine in dir and clears what it leaves outside its
// files: dockerd first (TERM: it stops its containers, unmounts their layers
// and exits within its shutdown timeout, 15 s; KILL after 30 s), then
// containerd (TERM, KILL after 10 s), then what a killed dockerd or
// containerd left running: each shim's descendants (the containers'
// processes), then the shims, KILLed; then everything mounted under dir
// (dockerd's bind mount of its data root, the containers' layers, the
// network namespace files), and the cgroups of its containers
// (dir/data/containers/ID: HIERARCHY/docker/ID, dockerd's cgroupfs layout)
// in every hierarchy. The engine's files stay (Release or Clean removes
// them). Each thing done is said.
func stopEngine(dir string, say func(string)) error {
	dir = realPath(dir)
	var errs []error
	for _, s := range []struct {
		prog    string
		timeout time.Duration
	}{{progDockerd, 30 * time.Second}, {progContainerd, 10 * time.Second}} {
		for _, pid := range engineProcs(dir, s.prog) {
			if err := stopPID(pid, s.timeout); err != nil {
				errs = append(errs, fmt.Errorf("%s of the engine %s: %w", s.prog, dir, err))
				continue
			}
			say(fmt.Sprintf("stopped %s (pid %d) of the engine %s", s.prog, pid, dir))
		}
	}
	errs = append(errs, killShims(dir, say), unmountUnder(dir, say), removeCgroups(dir, say))
	return errors.Join(errs...)
}

// engineProcs are the live processes of program prog with an argument
// naming dir or a path under it.
func engineProcs(dir, prog string) []int {
	tab := sample.NewProcTable("")
	if tab.Scan() != nil {
		return nil
	}
	var pids []int
	for _, p := range tab.Procs {
		if p.State == 'Z' {
			continue
		}
		args := cmdline(p.PID)
		if len(args) > 0 && filepath.Base(args[0]) == prog && namesUnder(args[1:], dir) {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

// cmdline is pid's argument vector (none when it cannot be read).
func cmdline(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// namesUnder reports whether an argument is dir, a path under it, or a
// unix:// address under it.
func namesUnder(args []string, dir string) bool {
	for _, a := range args {
		a = strings.TrimPrefix(a, "unix://")
		if a == dir || strings.HasPrefix(a, dir+"/") {
			return true
		}
	}
	return false
}

// killShims KILLs, for every shim of the engine in dir, its descendants
// (the containers' processes), then the shim: they are what outlives a
// killed dockerd and containerd. A killed shim leaves its socket, which
// containerd 1.6 keeps outside dir: it is removed too (shimSocket).
func killShims(dir string, say func(string)) error {
	shims := engineProcs(dir, progShim)
	if len(shims) == 0 {
		return nil
	}
	var sockets []string
	for _, pid := range shims {
		if s := shimSocket(cmdline(pid)); s != "" {
			sockets = append(sockets, s)
		}
	}
	inside := descendants(shims)
	if err := killAll(inside); err != nil {
		return fmt.Errorf("the containers' processes of the engine %s: %w", dir, err)
	}
	if err := killAll(shims); err != nil {
		return fmt.Errorf("the shims of the engine %s: %w", dir, err)
	}
	say(fmt.Sprintf("killed %d shim(s) of the engine %s and %d process(es) of its containers", len(shims), dir, len(inside)))
	var errs []error
	for _, s := range sockets {
		if fi, err := os.Lstat(s); err != nil || fi.Mode().Type() != fs.ModeSocket {
			continue
		}
		errs = append(errs, os.Remove(s))
		say("removed the killed shim's socket " + s)
	}
	return errors.Join(errs...)
}

// shimSocketDir is where containerd 1.6 puts its shims' sockets, whatever
// its own state directory (runtime/v2/shim: defaults.DefaultStateDir + "/s").
const shimSocketDir = "/run/containerd/s"

// shimSocket is the socket of the shim with arguments args ("-namespace NS
// -id ID -address ADDR ..."): shimSocketDir/hex(sha256(ADDR/NS/ID)), as
// containerd 1.6 names it; "" when an argument is missing.
func shimSocket(args []string) string {
	flag := func(name string) string {
		if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	ns, id, addr := flag("-namespace"), flag("-id"), flag("-address")
	if ns == "" || id == "" || addr == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(filepath.Join(addr, ns, id)))
	return filepath.Join(shimSocketDir, hex.EncodeToString(sum[:]))
}

// descendants are the live descendants of roots.
func descendants(roots []int) []int {
	tab := sample.NewProcTable("")
	if tab.Scan() != nil {
		return nil
	}
	children := map[int][]int{}
	for _, p := range tab.Procs {
		if p.State != 'Z' {
			children[p.PPID] = append(children[p.PPID], p.PID)
		}
	}
	var out []int
	for queue := slices.Clone(roots); len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// killAll sends KILL to every pid and waits (5 s at most) until none runs.
func killAll(pids []int) error {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	alive := func() []int {
		return slices.DeleteFunc(slices.Clone(pids), func(pid int) bool { return !Running(pid) })
	}
	if waitFor(5*time.Second, 100*time.Millisecond, func() bool { return len(alive()) == 0 }) {
		return nil
	}
	return fmt.Errorf("pids %s survived KILL", strings.Trim(fmt.Sprint(alive()), "[]"))
}

// A mount is one line of /proc/self/mountinfo.
type mount struct {
	point  string // where it is mounted
	fstype string
}

// mounts are this mount namespace's mounts, in mountinfo's order (a mount
// comes after the one it is mounted on).
func mounts() ([]mount, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	return parseMountinfo(b), nil
}

// parseMountinfo reads mountinfo lines: "ID PARENT MAJ:MIN ROOT POINT
// OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER", POINT with octal escapes.
func parseMountinfo(b []byte) []mount {
	var out []mount
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := slices.Index(f, "-")
		if len(f) < 5 || sep < 0 || sep+1 >= len(f) {
			continue
		}
		out = append(out, mount{point: unescapeOctal(f[4]), fstype: f[sep+1]})
	}
	return out
}

// unescapeOctal undoes mountinfo's \NNN escapes (space, tab, newline, backslash).
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountsUnder are the mount points at dir or under it, the last mounted first.
func mountsUnder(dir string) ([]string, error) {
	all, err := mounts()
	if err != nil {
		return nil, err
	}
	dir = realPath(dir)
	var out []string
	for _, m := range slices.Backward(all) {
		if m.point == dir || strings.HasPrefix(m.point, dir+"/") {
			out = append(out, m.point)
		}
	}
	return out, nil
}

// unmountUnder unmounts (lazily: MNT_DETACH) everything mounted at dir or
// under it, the last mounted first, and fails naming what is still there.
func unmountUnder(dir string, say func(string)) error {
	points, err := mountsUnder(dir)
	if err != nil || len(points) == 0 {
		return err
	}
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	left, err := mountsUnder(dir)
	if err == nil && len(left) > 0 {
		err = fmt.Errorf("still mounted under the engine %s: %s", dir, strings.Join(left, " "))
	}
	if err := errors.Join(append(errs, err)...); err != nil {
		return err
	}
	say(fmt.Sprintf("unmounted %d mount(s) under the engine %s", len(points), dir))
	return nil
}

// removeCgroups removes HIERARCHY/docker/ID of every container ID of the
// engine in dir (dir/data/containers/ID), in every cgroup hierarchy, when
// it is still there: a container whose shim was killed leaves it. The
// parent "docker" is every engine's on the machine: it stays. A cgroup
// whose killed process the kernel has not released yet is busy for a
// moment (seen in CI right after killShims): a busy one is tried again for
// cgroupGrace, and one still busy then is an error naming its processes.
func removeCgroups(dir string, say func(string)) error {
	ids, err := os.ReadDir(filepath.Join(dir, "data", "containers"))
	if err != nil || len(ids) == 0 {
		return nil
	}
	all, err := mounts()
	if err != nil {
		return err
	}
	var cgroups []string
	for _, m := range all {
		if m.fstype != "cgroup" && m.fstype != "cgroup2" {
			continue
		}
		for _, id := range ids {
			cg := filepath.Join(m.point, "docker", id.Name())
			if _, err := os.Stat(cg); err == nil {
				cgroups = append(cgroups, cg)
			}
		}
	}
	n := 0
	busy := map[string]error{}
	try := func() bool {
		for _, cg := range cgroups {
			switch err := syscall.Rmdir(cg); {
			case err == nil || errors.Is(err, fs.ErrNotExist):
				n++
				delete(busy, cg)
			default:
				busy[cg] = err
			}
		}
		cgroups = slices.DeleteFunc(cgroups, func(cg string) bool { _, ok := busy[cg]; return !ok })
		return len(cgroups) == 0
	}
	if !try() {
		waitFor(cgroupGrace, 100*time.Millisecond, try)
	}
	if n > 0 {
		say(fmt.Sprintf("removed %d cgroup(s) of the engine %s's containers", n, dir))
	}
	var errs []error
	for _, cg := range cgroups {
		procs, _ := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
		errs = append(errs, fmt.Errorf("removing the cgroup %s (processes in it: %q) after %s: %w",
			cg, strings.Join(strings.Fields(string(procs)), " "), cgroupGrace, busy[cg]))
	}
	return errors.Join(errs...)
}

// cgroupGrace is how long removeCgroups tries a busy cgroup again.
var cgroupGrace = 5 * time.Second

// realPath is path with its symlinks resolved, as /proc shows it (path
// itself when it cannot be resolved).
func realPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}
