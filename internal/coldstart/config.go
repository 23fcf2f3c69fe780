// Package coldstart is the coldstart stage: it starts a product's server
// command in its own process group, polls its readiness URL, and records the
// time from just before exec to the first ready response and the peak RSS of
// the process tree until then (schema idpbench.coldstart/v1). The product is
// then left running (its pid in a pidfile) or stopped.
//
// The command line is recorded in the result, so secrets must reach the
// product through its environment or files, never its arguments.
package coldstart

import (
	"context"
	"net/url"
	"path"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
)

// Config is one coldstart run.
type Config struct {
	ReadyURL       string        // polled with GET until it answers ReadyStatus
	ReadyStatus    int           // HTTP status taken as ready
	Timeout        time.Duration // from start to ready, at most
	Poll           time.Duration // interval between polls and RSS samples
	Mode           string        // "A" (fresh database), "B" (initialised database) or ""
	Product        string        // recorded in the result
	ProductVersion string        // recorded in the result
	Pidfile        string        // written with the product's pid and its identity (start time, boot id) once started; removed when it is stopped
	Stop           bool          // stop the product once ready (else leave it running)
	Log            string        // the product's stdout and stderr; "" = /dev/null
	Output         string        // result file, "-" = stdout
	Command        []string      // argv of the product (no secrets: it is recorded)
	// Containers: name globs of the product's containers (compose mode).
	// With them the peak is their memory (the sampler's container figure,
	// summed), not the command's process tree, which is only the compose
	// client there.
	Containers []string

	containerMemory func(context.Context) (int64, []string, error) // nil = sample.Containers (tests fake it)

	StopGrace time.Duration // SIGTERM to SIGKILL; 0 = 10s
	ProcRoot  string        // proc mount; "" = /proc
}

// Validate checks the configuration; its errors are usage errors naming the flag.
func (c *Config) Validate() error {
	u, err := url.Parse(c.ReadyURL)
	switch {
	case c.ReadyURL == "":
		return cli.Usagef("--ready: required (the product's readiness URL)")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return cli.Usagef("--ready %q: want an absolute http(s) URL", c.ReadyURL)
	case c.ReadyStatus < 100 || c.ReadyStatus > 599:
		return cli.Usagef("--ready-status: want an HTTP status 100-599, got %d", c.ReadyStatus)
	case c.Timeout <= 0:
		return cli.Usagef("--timeout: must be > 0, got %s", c.Timeout)
	case c.Poll <= 0 || c.Poll > c.Timeout:
		return cli.Usagef("--poll: must be > 0 and <= --timeout, got %s", c.Poll)
	case c.Mode != "" && c.Mode != "A" && c.Mode != "B":
		return cli.Usagef("--mode: want A (fresh database) or B (initialised database), got %q", c.Mode)
	case len(c.Command) == 0 || c.Command[0] == "":
		return cli.Usagef("no command: give it after --, e.g. coldstart --ready URL -- hydra serve all")
	case c.Pidfile == "-":
		return cli.Usagef("--pidfile: want a file name, not \"-\"")
	case c.badGlob() >= 0:
		return cli.Usagef("--containers %q: want a container name glob", c.Containers[c.badGlob()])
	case c.StopGrace < 0:
		return cli.Usagef("stop grace must be >= 0, got %s", c.StopGrace)
	}
	return nil
}

// badGlob is the index of the first of Containers that is not a glob, or -1.
func (c *Config) badGlob() int {
	for i, g := range c.Containers {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			return i
		}
	}
	return -1
}
