// Command podrun is scripts/test-k8s.sh's stand-in for the part of a
// kubelet that starts a pod's container, where no kubelet can run: it turns
// a pod as the API server returns it (scheduled, defaults applied) and the
// Secret its volume names into `docker run`'s arguments, running the
// container as the kubelet would (user, groups, security settings, limits,
// environment with $(VAR) expanded, the Secret's files, an emptyDir) in
// the network namespace of the pod's sandbox, a container running
// `podrun pause` (the kubelet's pause container). It also writes the nginx
// the test's agents load (internal/nginxconf). Built by the test, not one
// of the tools.
package main

import (
	"context"
	"encoding/json"
	"fmt"
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
		About:    "The test's stand-in for a kubelet's container start (scripts/test-k8s.sh).\n",
		Exits:    "Exit status: 0 ok, 1 a pod or Secret it cannot run as the kubelet would (named), 2 usage error.",
		Examples: []string{
			`podrun docker-args --pod pod.json --secret secret.json --dir "$dir/volumes" --network container:SANDBOX | xargs -0 docker run`,
			`podrun nginx-conf --dir "$state/nginx" --port 8080 --access-log "$state/nginx/access.log"`,
		},
		Subcommands: []cli.Subcommand{
			{Name: "docker-args", Summary: "print docker run's arguments for the pod, NUL-terminated; write its Secret volume's files", Run: runDockerArgs},
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

func runDockerArgs(_ context.Context, args []string, e cli.Env) error {
	var podFile, secretFile, dir, network string
	fs := cli.NewFlagSet("docker-args")
	fs.StringVar(&podFile, "pod", "", "the pod, `FILE` of kubectl get pod -o json (required)")
	fs.StringVar(&secretFile, "secret", "", "the Secret its volume names, `FILE` of kubectl get secret -o json (required)")
	fs.StringVar(&dir, "dir", "", "`DIR` to write the Secret volume's files under (DIR/VOLUME; required)")
	fs.StringVar(&network, "network", "host", "docker run's --network `MODE`: the pod sandbox's, container:NAME")
	if err := parse(fs, "docker-args", args, e); err != nil {
		return err
	}
	if podFile == "" || secretFile == "" || dir == "" {
		return cli.Usagef("--pod, --secret and --dir are required")
	}
	var p pod
	var s secret
	if err := readJSON(podFile, &p); err != nil {
		return err
	}
	if err := readJSON(secretFile, &s); err != nil {
		return err
	}
	out, err := dockerArgs(p, s, dir, network)
	if err != nil {
		return err
	}
	for _, a := range out {
		if _, err := fmt.Fprintf(e.Stdout, "%s\x00", a); err != nil {
			return err
		}
	}
	return nil
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

// readJSON decodes the JSON object in file into v.
func readJSON(file string, v any) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	return nil
}
