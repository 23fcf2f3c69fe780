package sample

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/docker"
)

const (
	id1 = "1111111111111111111111111111111111111111111111111111111111111111"
	id2 = "2222222222222222222222222222222222222222222222222222222222222222"
)

func TestMatchContainers(t *testing.T) {
	all := []container{{"a", "/keycloak-1"}, {"b", "keycloak-db"}, {"c", "hydra"}, {"d", "zitadel_api_1"}}
	tests := []struct {
		globs []string
		want  []string
	}{
		{[]string{"keycloak*"}, []string{"keycloak-1", "keycloak-db"}},
		{[]string{"keycloak-?"}, []string{"keycloak-1"}},
		{[]string{"hydra", "zitadel*"}, []string{"hydra", "zitadel_api_1"}},
		{[]string{"*"}, []string{"keycloak-1", "keycloak-db", "hydra", "zitadel_api_1"}},
		{[]string{"nothing"}, nil},
	}
	for _, tt := range tests {
		var got []string
		for _, c := range matchContainers(all, tt.globs) {
			got = append(got, c.Name)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v: got %v, want %v", tt.globs, got, tt.want)
		}
	}
}

// TestDockerCgroups reads CPU and memory from fake cgroup v2 (systemd
// driver layout) and v1 (cgroupfs layout) trees.
func TestDockerCgroups(t *testing.T) {
	tests := []struct {
		name, tree, id, cpuFile, cpuBefore, cpuAfter string
		wantRSS                                      int64
		wantPct                                      float64
	}{
		{"cgroup v2", "cgroup2", id1, "fs/cgroup/system.slice/docker-" + id1 + ".scope/cpu.stat",
			"usage_usec 2000000\n", "usage_usec 2500000\n", 420000000 - 100000000, 50},
		{"cgroup v1", "cgroup1", id2, "fs/cgroup/cpuacct/docker/" + id2 + "/cpuacct.usage",
			"3000000000\n", "4500000000\n", 60000000 - 8000000, 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := t.TempDir()
			if err := os.CopyFS(sys, os.DirFS(filepath.Join("testdata", tt.tree))); err != nil {
				t.Fatal(err)
			}
			list := func(context.Context) ([]container, error) {
				return []container{{tt.id, "/product-1"}, {"ffff", "other"}}, nil
			}
			var stderr strings.Builder
			d := newDockerSource(context.Background(), Config{DockerGlobs: []string{"product-*"}, SysRoot: sys, docker: list}, &stderr)
			if d == nil {
				t.Fatalf("no source; stderr %q", stderr.String())
			}
			writeFile(t, filepath.Join(sys, tt.cpuFile), tt.cpuBefore)
			if recs := d.collect(context.Background(), &tick{baseline: true}, nil); len(recs) != 0 || stderr.Len() != 0 {
				t.Fatalf("baseline wrote %v, stderr %q", recs, stderr.String())
			}
			writeFile(t, filepath.Join(sys, tt.cpuFile), tt.cpuAfter)
			recs := d.collect(context.Background(), &tick{dt: 1, now: time.Unix(1, 0)}, nil)
			if len(recs) != 1 {
				t.Fatalf("records %v, stderr %q", recs, stderr.String())
			}
			r := recs[0]
			if r.Source != "container:product-1" || r.RSSBytes != tt.wantRSS || r.CPUPct != tt.wantPct {
				t.Errorf("got %s rss %d cpu %.2f, want container:product-1 %d %.2f", r.Source, r.RSSBytes, r.CPUPct, tt.wantRSS, tt.wantPct)
			}
		})
	}
}

func TestNoDockerEngine(t *testing.T) {
	for _, lerr := range []error{docker.ErrDockerNotAvailable, errors.New("Cannot connect to the Docker daemon")} {
		var stderr strings.Builder
		list := func(context.Context) ([]container, error) { return nil, lerr }
		d := newDockerSource(context.Background(), Config{DockerGlobs: []string{"x"}, docker: list}, &stderr)
		if d != nil || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "no Docker engine") {
			t.Errorf("%v: source %v, stderr %q; want none and one warning", lerr, d, stderr.String())
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestContainersMemory: the matching containers' memory summed from their
// cgroups on every call, the list asked again only after Every or Relist, and a
// first listing that fails is the error.
func TestContainersMemory(t *testing.T) {
	sys := t.TempDir()
	if err := os.CopyFS(sys, os.DirFS(filepath.Join("testdata", "cgroup1"))); err != nil {
		t.Fatal(err)
	}
	lists := 0
	c := &Containers{Globs: []string{"product-*"}, Every: time.Hour, SysRoot: sys,
		list: func(context.Context) ([]container, error) {
			lists++
			return []container{{id2, "/product-1"}, {"ffff", "other"}, {"eeee", "product-gone"}}, nil
		}}
	for range 3 {
		mem, sources, err := c.Memory(context.Background())
		if err != nil || mem != 60000000-8000000 || !reflect.DeepEqual(sources, []string{"container:product-1"}) {
			t.Fatalf("Memory = %d %v %v, want %d [container:product-1] (product-gone has no cgroup: left out)", mem, sources, err, 60000000-8000000)
		}
	}
	if lists != 1 {
		t.Errorf("listed %d times in three calls within Every, want 1", lists)
	}
	c.Relist()
	if _, _, err := c.Memory(context.Background()); err != nil || lists != 2 {
		t.Errorf("after Relist: listed %d times (err %v), want 2", lists, err)
	}
	failing := &Containers{Globs: []string{"x"}, list: func(context.Context) ([]container, error) {
		return nil, docker.ErrDockerNotAvailable
	}}
	if _, _, err := failing.Memory(context.Background()); !errors.Is(err, docker.ErrDockerNotAvailable) {
		t.Errorf("a first listing that fails: err %v, want it", err)
	}
}
