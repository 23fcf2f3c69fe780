// Package sample is the sampler stage: every interval it records the CPU and
// memory of process trees, Docker containers, the host and a PostgreSQL
// server (with its transaction and row rates) as idpbench.sample/v1 JSON
// lines, and at the end PostgreSQL's top queries by total time.
//
// Cost matters more than breadth: the sampler runs next to the product being
// measured, so process trees are read from /proc directly with reused
// buffers, one PostgreSQL connection is kept for the whole run and its
// statements are prepared once.
package sample

import (
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
)

// Config is one sampler run.
type Config struct {
	Selectors      []Selector    // process trees, one record source each
	DockerGlobs    []string      // container name globs (path.Match syntax)
	PostgresDSN    string        // "" = no PostgreSQL source; may hold a password (never printed)
	PGAllDatabases bool          // rates and connections of every database, not only the DSN's
	PGReset        bool          // call pg_stat_statements_reset() at start
	Every          time.Duration // sampling interval
	Duration       time.Duration // stop after this long; 0 = until interrupted
	UntilStdinEOF  bool          // stop when stdin reaches end of file
	PSSEvery       time.Duration // read PSS (/proc/PID/smaps_rollup) at most this often; 0 = never
	Host           bool          // write a "host" record per tick
	HostProbe      bool          // host records carry the host probe's run (probe_us)
	SelfCPU        bool          // print the sampler's own CPU use to stderr at the end
	Output         string        // JSON lines file, "-" = stdout

	ProcRoot string        // proc mount; "" = /proc (tests use a fake tree)
	SysRoot  string        // sys mount for cgroups; "" = /sys
	Hz       float64       // clock ticks per second; 0 = the system's
	docker   dockerLister  // nil = the docker CLI (tests fake it)
	minFinal time.Duration // least interval before the final record; 0 = min(Every, 250ms)
}

// Validate checks the configuration; its errors are usage errors naming the flag.
func (c *Config) Validate() error {
	switch {
	case c.Every <= 0:
		return cli.Usagef("--every: must be > 0, got %s", c.Every)
	case c.Every < 10*time.Millisecond:
		return cli.Usagef("--every: %s is below the 10ms resolution of process CPU times", c.Every)
	case c.PSSEvery < 0:
		return cli.Usagef("--pss-every: must be >= 0, got %s", c.PSSEvery)
	case c.Duration < 0:
		return cli.Usagef("--duration: must be >= 0, got %s", c.Duration)
	case len(c.Selectors) == 0 && len(c.DockerGlobs) == 0 && c.PostgresDSN == "" && !c.Host:
		return cli.Usagef("nothing to sample: give --pid, --pidfile, --match, --docker, --postgres or --host")
	}
	for _, s := range c.Selectors {
		if err := s.validate(); err != nil {
			return err
		}
	}
	for _, g := range c.DockerGlobs {
		if _, err := path.Match(g, ""); err != nil {
			return cli.Usagef("--docker %q: bad glob: %v", g, err)
		}
	}
	return nil
}

func (s Selector) validate() error {
	switch s.Kind {
	case SelectPID, SelectPidfile:
		if strings.TrimSpace(s.Value) == "" {
			return cli.Usagef("--%s: empty value", s.Kind)
		}
	case SelectMatch:
		if _, err := regexp.Compile(s.Value); err != nil {
			return cli.Usagef("--match %q: %v", s.Value, err)
		}
	default:
		return cli.Usagef("unknown process selector %q", s.Kind)
	}
	if strings.ContainsAny(s.Name, " \t\n") {
		return cli.Usagef("--name %q: no spaces allowed", s.Name)
	}
	return nil
}

// DSNHasPassword reports whether a PostgreSQL connection string (URL or
// key=value form) carries a password, which must not come from argv.
func DSNHasPassword(dsn string) bool {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			_, has := u.User.Password()
			return has || u.Query().Has("password")
		}
		_, rest, _ := strings.Cut(dsn, "://") // unparsable: look for user:password@
		at := strings.LastIndex(rest, "@")
		return (at >= 0 && strings.Contains(rest[:at], ":")) || strings.Contains(rest, "password=")
	}
	return regexp.MustCompile(`(^|\s)password\s*=`).MatchString(dsn)
}
