// Command podrun is what scripts/test-k8s.sh's pods and nodes need beside
// the tools: `podrun pause`, the process of the pods' sandbox image (the
// kubelet's pause container; no registry can be reached here for
// registry.k8s.io/pause), and `podrun nginx-conf`, the config of the nginx
// that each test pod gets on its own 127.0.0.1 (internal/nginxconf;
// scripts/lib/k8s-cni-target.sh). Built by the test, not one of the tools.
package main

import (
	"context"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/nginxconf"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func tool() cli.Tool {
	return cli.Tool{
		Name:     "podrun",
		Synopsis: "SUBCOMMAND [FLAGS]",
		About:    "The pods' sandbox process and their nginx's config (scripts/test-k8s.sh).\n",
		Exits:    "Exit status: 0 ok, 1 the config cannot be written, 2 usage error.",
		Examples: []string{
			`podrun pause   # ENTRYPOINT ["/usr/local/bin/podrun", "pause"] of localhost/pause:test`,
			`podrun nginx-conf --dir "$dir" --port 8080 --access-log "$dir/access.log"`,
		},
		Subcommands: []cli.Subcommand{
			{Name: "pause", Summary: "wait for SIGTERM or SIGINT, then exit 0: a pod sandbox's process", Run: runPause},
			{Name: "nginx-conf", Summary: "write nginx's config serving a discovery document on 127.0.0.1:PORT", Run: runNginxConf},
		},
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	sub, err := tool().Dispatch(ctx, args, cli.Env{Stdout: stdout, Stderr: stderr})
	who := "podrun"
	if sub != "" {
		who += " " + sub
	}
	return cli.Done(stderr, who, err)
}

func runPause(ctx context.Context, args []string, e cli.Env) error {
	if err := parse(cli.NewFlagSet("pause"), "pause", args, e); err != nil {
		return err
	}
	<-ctx.Done() // cli.SignalContext: SIGINT or SIGTERM
	return nil
}

func runNginxConf(_ context.Context, args []string, e cli.Env) error {
	var c nginxconf.Config
	var dir string
	fs := cli.NewFlagSet("nginx-conf")
	fs.StringVar(&dir, "dir", "", "`DIR` for nginx.conf, the document and nginx's temp files (required)")
	fs.IntVar(&c.Port, "port", 0, "the 127.0.0.1 `PORT` to listen on (required)")
	fs.StringVar(&c.AccessLog, "access-log", "", "the access log `FILE`, a line a request (default off)")
	if err := parse(fs, "nginx-conf", args, e); err != nil {
		return err
	}
	if dir == "" || c.Port <= 0 {
		return cli.Usagef("--dir and --port are required")
	}
	c.Discovery = `{"issuer":"http://127.0.0.1/","token_endpoint":"http://127.0.0.1/oauth2/token"}` + "\n"
	return nginxconf.Write(dir, c)
}

// parse parses a subcommand's flags; it takes no arguments.
func parse(fs *pflag.FlagSet, name string, args []string, e cli.Env) error {
	h := cli.Help{Tool: "podrun " + name, Head: "Usage: podrun " + name + " [FLAGS]\n\nFlags:\n"}
	if err := h.ParseSub(fs, args, e.Stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unknown argument: %s", fs.Arg(0))
	}
	return nil
}
