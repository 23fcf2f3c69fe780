package products

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAdaptersPrintTheGoldens runs today's adapters (products/*/adapter,
// answering through provision args) on a copy of the fabricated states with
// testdata/args/adapters.sh and holds every entry point's output and every
// call it made to the goldens the adapters printed before their answers
// moved here, but for where a pool's -n stands in mintpool's arguments
// (the adapter now adds it at the end) and the configuration files, which
// are Go's now (TestAnswersMatchTheAdapters holds those).
// inProcess are the entry points the adapters answered until the ladder
// read their answers in-process (product.Product.Answer).
var inProcess = []string{"endpoint", "loadargs", "ttl", "metricsargs"}

func TestAdaptersPrintTheGoldens(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds provision and runs the adapters")
	}
	for _, tool := range []string{"bash", "jq", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", dir+"/", "./cmd/provision", "./cmd/runstate")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building provision and runstate: %v\n%s", err, out)
	}
	if err := os.CopyFS(filepath.Join(dir, "testdata"), os.DirFS("testdata")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	run := exec.CommandContext(ctx, "bash", "testdata/args/adapters.sh")
	run.Dir = dir
	run.Env = append(os.Environ(), "ROOT="+root, "BIN="+filepath.Join(dir, "provision"),
		"RUNSTATE="+filepath.Join(dir, "runstate"), "OUT="+out)
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("adapters.sh: %v\n%s", err, b)
	}
	for _, name := range []string{"refop", "hydra", "keycloak", "zitadel"} {
		was := readGolden(t, filepath.Join("testdata", "args", name+".golden"))
		now := readGolden(t, filepath.Join(out, name+".golden"))
		for key, g := range was {
			// The moved verbs are the entries' answers now (TestAnswersMatchTheAdapters).
			if verb, _, _ := strings.Cut(key, " "); key == "config" || slices.Contains(inProcess, verb) {
				continue
			}
			n := now[key]
			if n == nil {
				t.Errorf("%s %s: not run", name, key)
				continue
			}
			if n.rc != g.rc || !slices.Equal(n.out, g.out) {
				t.Errorf("%s %s: exit %s, printed %q; was exit %s, %q", name, key, n.rc, n.out, g.rc, g.out)
			}
			if len(n.recorded) != len(g.recorded) {
				t.Errorf("%s %s: %d calls, was %d", name, key, len(n.recorded), len(g.recorded))
				continue
			}
			for i := range g.recorded {
				if a, b := withoutN(n.recorded[i]), withoutN(g.recorded[i]); !slices.Equal(a, b) {
					t.Errorf("%s %s: call %d\n got %q\nwas %q", name, key, i, a, b)
				}
			}
		}
	}
}

// withoutN is a recorded mintpool call without its -n (the pool's size
// stays compared: it is in the provision pool record).
func withoutN(call []string) []string {
	if len(call) > 0 && call[0] == "mintpool" {
		return without(call, "-n")
	}
	return call
}
