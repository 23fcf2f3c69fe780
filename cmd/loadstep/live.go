package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/live"
	"github.com/idpbench/idpbench/internal/load"
)

// liveFlags is --metrics-addr: the running step's figures as Prometheus
// metrics (internal/live).
type liveFlags struct{ addr string }

func (f *liveFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.addr, "metrics-addr", "", "serve the running step's figures as Prometheus metrics at http://HOST:PORT/metrics (port 0: a free one, said on stderr), from before the warmup until the result is written; see Live metrics below; default none")
}

// validate checks the address's form; whether it can be listened on is
// known only at start.
func (f *liveFlags) validate() error {
	if f.addr == "" {
		return nil
	}
	if err := live.CheckAddr(f.addr); err != nil {
		return cli.Usagef("--metrics-addr %q: %v", f.addr, err)
	}
	return nil
}

// start listens on --metrics-addr, before any load, and has lc show the
// server its figures; stop shuts the server down, waiting up to 5 s for
// scrapes in progress.
func (f *liveFlags) start(lc *load.Config, stderr io.Writer) (stop func(), err error) {
	if f.addr == "" {
		return func() {}, nil
	}
	m := live.New()
	srv, err := live.Listen(f.addr, m)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", f.addr, err)
	}
	lc.Live = m
	fmt.Fprintf(stderr, "loadstep: live metrics at http://%s/metrics\n", srv.Addr())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			fmt.Fprintf(stderr, "loadstep: --metrics-addr: closing: %v\n", err)
		}
	}, nil
}
