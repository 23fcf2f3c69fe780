package runstate

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestParseMountinfo: the mount point is field 5 with its octal escapes
// undone, the file system type the field after "-", optional fields or not.
func TestParseMountinfo(t *testing.T) {
	in := `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
45 27 254:0 /tmp/e/data /tmp/e/data rw,relatime shared:1 - ext4 /dev/vda rw
49 45 0:40 / /tmp/e/data/overlay2/ab/merged rw,relatime shared:2 - overlay overlay rw,lowerdir=/x
50 27 0:4 net:[4026531833] /tmp/e/exec/netns/default rw - nsfs nsfs rw
51 27 0:5 / /tmp/with\040space\134x rw - tmpfs tmpfs rw
30 22 0:26 / /sys/fs/cgroup/memory rw,nosuid shared:9 - cgroup cgroup rw,memory
bad line
`
	want := []mount{
		{"/", "ext4"},
		{"/tmp/e/data", "ext4"},
		{"/tmp/e/data/overlay2/ab/merged", "overlay"},
		{"/tmp/e/exec/netns/default", "nsfs"},
		{`/tmp/with space\x`, "tmpfs"},
		{"/sys/fs/cgroup/memory", "cgroup"},
	}
	if got := parseMountinfo([]byte(in)); !slices.Equal(got, want) {
		t.Errorf("parseMountinfo:\n got %q\nwant %q", got, want)
	}
}

// TestNamesUnder: an argument names the engine when it is its directory,
// a path under it or a unix:// address under it; a sibling with the same
// prefix does not.
func TestNamesUnder(t *testing.T) {
	const dir = "/tmp/idpbench-dockerd-1"
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{[]string{"--data-root", dir + "/data"}, true},
		{[]string{"-H", "unix://" + dir + "/docker.sock"}, true},
		{[]string{dir}, true},
		{[]string{"--data-root", dir + "0/data"}, false},
		{[]string{"--data-root", "/var/lib/docker"}, false},
		{nil, false},
	} {
		if got := namesUnder(tt.args, dir); got != tt.want {
			t.Errorf("namesUnder(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}

// TestShimSocket: the socket containerd 1.6 gave a shim of an engine here
// (seen in /run/containerd/s); none without -namespace, -id or -address.
func TestShimSocket(t *testing.T) {
	args := []string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "moby",
		"-id", "042fedfde1309d61730ee589bfeb7491c69b06b8659869abb5eb81f9e85d8cb3",
		"-address", "/tmp/idpbench-dockerd-3235613045/containerd.sock"}
	if got, want := shimSocket(args), "/run/containerd/s/e90995900c65e61b5148c6b82af1867774111d82b091c9d5aeb47dd5967b3fb6"; got != want {
		t.Errorf("shimSocket = %q, want %q", got, want)
	}
	if got := shimSocket(args[:len(args)-1]); got != "" {
		t.Errorf("shimSocket without the address's value = %q, want none", got)
	}
}

// fake starts script under sh as a process whose argv[0] is name and
// whose last argument is arg, in a process group of its own; it returns
// once the script printed its first line, and kills the group when the
// test ends.
func fake(t *testing.T, name, script, arg string) int {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script, "sh", arg)
	cmd.Args[0] = name
	return startGroup(t, cmd, name).Process.Pid
}

// TestStopEngine: dockerd and containerd naming the engine's directory are
// stopped with TERM, a shim is KILLed with its descendants (a container's
// processes), and a dockerd of another directory is left alone; each is
// said. Nothing is mounted under the directory, nothing to unmount.
func TestStopEngine(t *testing.T) {
	dir := realPath(t.TempDir())
	other := dir + "-other"
	const termed = "trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done"
	dockerd := fake(t, progDockerd, termed, dir+"/data")
	containerd := fake(t, progContainerd, termed, dir+"/containerd.toml")
	shim := fake(t, "/usr/bin/"+progShim, "sleep 600 & echo ready; wait", dir+"/containerd.sock")
	inside := descendants([]int{shim})
	if len(inside) != 1 {
		t.Fatalf("the shim's descendants: %v, want its one sleep", inside)
	}
	stranger := fake(t, progDockerd, termed, other+"/data")
	var said said
	if err := stopEngine(dir, said.say); err != nil {
		t.Fatal(err)
	}
	for what, pid := range map[string]int{"dockerd": dockerd, "containerd": containerd, "shim": shim, "the shim's child": inside[0]} {
		if Running(pid) {
			t.Errorf("%s (pid %d) runs after stopEngine", what, pid)
		}
	}
	if !Running(stranger) {
		t.Errorf("the dockerd of another directory (pid %d) was stopped", stranger)
	}
	said.has(t, "stopped dockerd (pid ")
	said.has(t, "stopped containerd (pid ")
	said.has(t, "killed 1 shim(s) of the engine "+dir+" and 1 process(es) of its containers")
	for _, s := range said {
		if strings.Contains(s, "unmounted") || strings.Contains(s, "cgroup") {
			t.Errorf("said %q with nothing mounted and no container", s)
		}
	}
}

// TestStopMountedEngine (as root): Release refuses a state with a mount
// under it, Stop unmounts it (the engine's mark found), then Release
// deletes the state; Clean of a killed session's state does the same.
func TestStopMountedEngine(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting needs root")
	}
	for _, via := range []string{"stop", "clean"} {
		t.Run(via, func(t *testing.T) {
			state := filepath.Join(realPath(t.TempDir()), "state")
			point := filepath.Join(state, "data", "overlay2", "merged")
			if err := os.MkdirAll(point, 0o700); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(state, engineMark), "a Docker engine\n")
			if err := syscall.Mount("tmpfs", point, "tmpfs", 0, "size=1m"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Unmount(point, syscall.MNT_DETACH) })
			writeFile(t, filepath.Join(point, "layer"), "x")
			if err := Release(state); err == nil || !strings.Contains(err.Error(), "still mounted under it: "+point) {
				t.Fatalf("Release with a mount under the state: %v, want a refusal naming %s", err, point)
			}
			var said said
			var err error
			if via == "stop" {
				err = Stop(state, said.say)
			} else {
				err = Clean(state, "", said.say)
			}
			if err != nil {
				t.Fatal(err)
			}
			said.has(t, "unmounted 1 mount(s) under the engine "+state)
			if left, err := mountsUnder(state); err != nil || len(left) > 0 {
				t.Fatalf("mounts under the state after %s: %v %v", via, left, err)
			}
			if err := Release(state); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(state); !os.IsNotExist(err) {
				t.Errorf("state after Release: %v", err)
			}
		})
	}
}
