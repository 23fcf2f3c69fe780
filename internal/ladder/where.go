package ladder

import (
	"cmp"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
)

// Where is where a step tool runs: its results, the product's state, the
// step counter and the adapter. The ladder and the GC-jitter run take it
// from the same flags (Flags) and resolve it the same way (Resolve).
type Where struct {
	RunDir, StateDir      string // "": RUN_DIR, STATE_DIR
	StepOffset, StepTotal int    // the step counter's start and bound (0: the tool's)
	Adapter               string // "": $IDPBENCH_ROOT/products/PRODUCT/adapter
	Bin                   string // the built tools (loadstep); "": $IDPBENCH_BIN
}

// Flags registers Where's flags on fs: results says what --run-dir holds,
// total what --step-total defaults to.
func (w *Where) Flags(fs *pflag.FlagSet, results, total string) {
	fs.StringVar(&w.RunDir, "run-dir", "", "results: `DIR`/"+results+" (env RUN_DIR)")
	fs.StringVar(&w.StateDir, "state-dir", "", "the product's state `DIR`, from its adapter's up and setup (env STATE_DIR)")
	fs.IntVar(&w.StepOffset, "step-offset", 0, "the step counter's start `K` (run-comparison.sh)")
	fs.IntVar(&w.StepTotal, "step-total", 0, "the step counter's bound `T` (default: "+total+")")
	fs.StringVar(&w.Adapter, "adapter", "", "the product's adapter `FILE` (default $IDPBENCH_ROOT/products/PRODUCT/adapter)")
}

// Resolve fills in what the flags left to the environment (RUN_DIR,
// STATE_DIR, IDPBENCH_BIN) and checks it; an error names the flag or
// variable. The adapter is resolved last (AdapterOf), so that the tool's
// own settings are checked first.
func (w Where) Resolve(getenv func(string) string) (Where, error) {
	w.RunDir, w.StateDir = cmp.Or(w.RunDir, getenv("RUN_DIR")), cmp.Or(w.StateDir, getenv("STATE_DIR"))
	w.Bin = cmp.Or(w.Bin, getenv("IDPBENCH_BIN"))
	switch {
	case w.RunDir == "" || w.StateDir == "":
		return w, cli.Usagef("RUN_DIR and STATE_DIR (or --run-dir/--state-dir) are required")
	case w.StepOffset < 0 || w.StepTotal < 0:
		return w, cli.Usagef("--step-offset %d, --step-total %d: want whole numbers", w.StepOffset, w.StepTotal)
	}
	return w, nil
}

// AdapterOf is --adapter, else IDPBENCH_ROOT's adapter of product; without
// either, an error that names script, the wrapper that sets the root.
func (w Where) AdapterOf(product, script string, getenv func(string) string) (string, error) {
	if w.Adapter != "" {
		return w.Adapter, nil
	}
	root := getenv("IDPBENCH_ROOT")
	if root == "" {
		return "", cli.Usagef("IDPBENCH_ROOT is not set: run %s, or name the adapter with --adapter", script)
	}
	return filepath.Join(root, "products", product, "adapter"), nil
}

// Loadstep is the loadstep executable among the built tools.
func (w Where) Loadstep() string { return filepath.Join(w.Bin, "loadstep") }
