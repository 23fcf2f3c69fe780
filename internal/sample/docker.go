package sample

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path"
	"time"

	"github.com/shirou/gopsutil/v4/common"
	"github.com/shirou/gopsutil/v4/docker"

	"github.com/idpbench/idpbench/internal/schema"
)

// container is a running Docker container.
type container struct {
	ID   string // full 64-hex id
	Name string
}

// dockerLister lists running containers.
type dockerLister func(ctx context.Context) ([]container, error)

// listDocker asks the docker CLI (through gopsutil) for running containers.
func listDocker(ctx context.Context) ([]container, error) {
	stats, err := docker.GetDockerStatWithContext(ctx)
	if err != nil {
		return nil, err
	}
	var out []container
	for _, s := range stats {
		if s.Running {
			out = append(out, container{ID: s.ContainerID, Name: s.Name})
		}
	}
	return out, nil
}

// relistEvery is how often the container list is refreshed: listing runs
// the docker CLI, far too costly for every tick.
const relistEvery = 30 * time.Second

// dockerSource samples containers by name glob from their cgroups: CPU from
// cpu.stat (cgroup v2) or cpuacct (v1); memory as usage minus inactive page
// cache, the figure `docker stats` shows.
type dockerSource struct {
	globs    []string
	list     dockerLister
	sysRoot  string // "" = /sys
	matched  []container
	listedAt time.Time
	prev     map[string]float64 // container id -> CPU seconds
	stderr   io.Writer
	warned   map[string]bool
}

// newDockerSource lists the containers once; without a Docker engine it
// warns and returns nil, and the run goes on without containers.
func newDockerSource(ctx context.Context, cfg Config, stderr io.Writer) *dockerSource {
	d := &dockerSource{globs: cfg.DockerGlobs, list: cfg.docker, sysRoot: cfg.SysRoot,
		prev: map[string]float64{}, stderr: stderr, warned: map[string]bool{}}
	if d.list == nil {
		d.list = listDocker
	}
	if err := d.relist(ctx); err != nil {
		fmt.Fprintf(stderr, "sampler: --docker: no Docker engine to ask (%v); sampling without containers\n", err)
		return nil
	}
	if len(d.matched) == 0 {
		fmt.Fprintf(stderr, "sampler: --docker: no running container matches %q yet; looking again every %s\n", d.globs, relistEvery)
	}
	return d
}

func (d *dockerSource) relist(ctx context.Context) error {
	all, err := d.list(ctx)
	if err != nil {
		return err
	}
	d.listedAt = time.Now()
	d.matched = matchContainers(all, d.globs)
	return nil
}

// matchContainers keeps the containers whose name matches a glob. Docker
// names may carry a leading "/", which is ignored.
func matchContainers(all []container, globs []string) []container {
	var out []container
	for _, c := range all {
		name := c.Name
		if len(name) > 0 && name[0] == '/' {
			name = name[1:]
		}
		for _, g := range globs {
			if ok, _ := path.Match(g, name); ok {
				out = append(out, container{ID: c.ID, Name: name})
				break
			}
		}
	}
	return out
}

func (d *dockerSource) collect(ctx context.Context, tk *tick, out []schema.Sample) []schema.Sample {
	if time.Since(d.listedAt) >= relistEvery {
		if err := d.relist(ctx); err != nil {
			d.warnOnce("list", fmt.Sprintf("listing containers: %v", err))
		}
	}
	ctx = d.env(ctx)
	for _, c := range d.matched {
		cpuS, rss, err := readContainer(ctx, c.ID)
		if err != nil {
			d.warnOnce(c.ID, fmt.Sprintf("container %s: reading cgroup: %v", c.Name, err))
			continue
		}
		prev, had := d.prev[c.ID]
		d.prev[c.ID] = cpuS
		if tk.baseline || !had || tk.dt <= 0 {
			continue
		}
		out = append(out, schema.Sample{Schema: schema.SampleV1, T: tk.now, Source: "container:" + c.Name,
			RSSBytes: rss, CPUPct: round2(max(cpuS-prev, 0) / tk.dt * 100)})
	}
	return out
}

func (d *dockerSource) env(ctx context.Context) context.Context { return withSysRoot(ctx, d.sysRoot) }

// withSysRoot has gopsutil read the cgroups under sysRoot ("" = /sys).
func withSysRoot(ctx context.Context, sysRoot string) context.Context {
	if sysRoot == "" {
		return ctx
	}
	return context.WithValue(ctx, common.EnvKey, common.EnvMap{common.HostSysEnvKey: sysRoot})
}

// readContainer returns a container's cumulative CPU seconds and its memory
// in use (bytes, without inactive page cache).
func readContainer(ctx context.Context, id string) (cpuS float64, rss int64, err error) {
	cpuS, err = docker.CgroupCPUUsageWithContext(ctx, id, "")
	if err != nil {
		return 0, 0, err
	}
	m, err := docker.CgroupMemWithContext(ctx, id, "")
	if err != nil {
		return 0, 0, err
	}
	inactive := m.TotalInactiveFile
	if inactive > m.MemUsageInBytes {
		inactive = m.MemUsageInBytes
	}
	return cpuS, int64(m.MemUsageInBytes - inactive), nil
}

func (d *dockerSource) warnOnce(key, msg string) {
	if !d.warned[key] {
		d.warned[key] = true
		fmt.Fprintf(d.stderr, "sampler: --docker: %s\n", msg)
	}
}

func (d *dockerSource) close() {}

// Containers measures, on each call, the memory of the running containers
// whose names match globs: the sampler's container figure (usage minus
// inactive page cache, what `docker stats` shows), summed. The container
// list is asked of the docker CLI at most every Every (a CLI run is far
// too costly for every call); the cgroup is read every call. coldstart
// uses it for a compose-mode product's peak memory.
type Containers struct {
	Globs   []string
	Every   time.Duration // how often the list is asked for; 0 = 1 s
	SysRoot string        // "" = /sys
	list    dockerLister
	at      time.Time // of the last listing; zero: list at the next call
	listed  bool      // a listing has succeeded
	seen    []container
}

// Relist makes the next Memory ask for the list again (a container that
// started since the last listing is then seen).
func (c *Containers) Relist() { c.at = time.Time{} }

// NewContainers measures the containers matching globs.
func NewContainers(globs []string) *Containers { return &Containers{Globs: globs} }

// Memory returns the matching containers' memory in bytes and their
// sources ("container:NAME"); a container whose cgroup cannot be read (it
// just stopped) is left out. err is the listing's, when no list was ever had.
func (c *Containers) Memory(ctx context.Context) (int64, []string, error) {
	if c.list == nil {
		c.list = listDocker
	}
	if c.at.IsZero() || time.Since(c.at) >= cmp.Or(c.Every, time.Second) {
		all, err := c.list(ctx)
		if err != nil && !c.listed {
			return 0, nil, err
		}
		if err == nil {
			c.at, c.listed, c.seen = time.Now(), true, matchContainers(all, c.Globs)
		}
	}
	ctx = withSysRoot(ctx, c.SysRoot)
	var sum int64
	var names []string
	for _, ct := range c.seen {
		if _, mem, err := readContainer(ctx, ct.ID); err == nil {
			sum += mem
			names = append(names, "container:"+ct.Name)
		}
	}
	return sum, names, nil
}
