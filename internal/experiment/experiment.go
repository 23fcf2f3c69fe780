// Package experiment holds the experiments about idpbench itself that run
// whole comparisons (cmd/experiment; scripts/warmup-check.sh and
// scripts/false-alarms.sh exec it): WarmupCheck, whether the stability
// warmup rule reaches what a fixed long warmup reaches, and FalseAlarms, how
// often the compare engine calls an unchanged target changed. Each runs
// the run tool ($IDPBENCH_BIN/run) several times and analyses the run
// directories with internal/compare.
package experiment

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/compare"
	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/steps"
)

// Env is what an experiment takes from its process instead of os.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Environ        func() []string // the environment the runs inherit
	Log            cli.Logger
}

// paths are the two locations every experiment needs from the environment
// scripts/lib/common.sh exports.
func (e Env) paths() (root, bin string, err error) {
	root, bin = e.Getenv("IDPBENCH_ROOT"), e.Getenv("IDPBENCH_BIN")
	if root == "" || bin == "" {
		return "", "", fmt.Errorf("IDPBENCH_ROOT and IDPBENCH_BIN are not set: run it through its script (scripts/warmup-check.sh, scripts/false-alarms.sh)")
	}
	return root, bin, nil
}

// dirs are an experiment's tools directory, its DIR (out, or def of
// IDPBENCH_ROOT when out is "") and DIR/runs, made.
func (e Env) dirs(out string, def func(root string) string) (bin, dir, runs string, err error) {
	root, bin, err := e.paths()
	if err != nil {
		return "", "", "", err
	}
	dir = cmp.Or(out, def(root))
	runs = filepath.Join(dir, "runs")
	return bin, dir, runs, os.MkdirAll(runs, 0o755)
}

// getenvOr is the variable's value, or def when it is unset or empty.
func (e Env) getenvOr(name, def string) string { return cmp.Or(e.Getenv(name), def) }

// runTool runs $IDPBENCH_BIN/run with args, the inherited environment plus
// vars (KEY=VALUE; a later one wins), its output going to logPath. The run
// tool is told the tools are built (IDPBENCH_NO_BUILD=1), as the scripts
// told scripts/run-comparison.sh. An interrupt is forwarded to it and
// waited for: it stops its products and writes its records first.
func runTool(ctx context.Context, e Env, bin, logPath string, args, vars []string) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("creating the run's log: %w", err)
	}
	defer logf.Close()
	cmd := cli.Command(ctx, nil, append([]string{filepath.Join(bin, "run")}, args...)...)
	cmd.Env = append(append(e.Environ(), vars...), "IDPBENCH_NO_BUILD=1")
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Run()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// loadSide reads one run (or product) directory for a comparison, as
// aggregate compare does: it must hold ladder step records.
func loadSide(ctx context.Context, path string, warn func(string)) (compare.Side, error) {
	in, err := model.Load(ctx, []string{path}, nil, warn)
	if err != nil {
		return compare.Side{}, err
	}
	ladder := 0
	for _, sf := range in.Steps {
		if p := sf.Step.Labels["phase"]; p == "" || p == steps.PhaseLadder {
			ladder++
		}
	}
	if ladder == 0 {
		return compare.Side{}, fmt.Errorf("%s: no ladder step records (found %d steps, %d meta records)", path, len(in.Steps), len(in.Metas))
	}
	return compare.Side{Name: path, Inputs: in}, nil
}

// compareAll compares every ladder level old and new both have, with
// samples of unit, at the default alpha (aggregate compare --all-steps
// --unit UNIT).
func compareAll(old, new compare.Side, unit string) compare.Result {
	return compare.Result{Old: compare.Describe(old), New: compare.Describe(new), Alpha: compare.DefaultAlpha,
		AllSteps: true, Unit: unit,
		Rows: compare.Compare(old, new, compare.Options{Alpha: compare.DefaultAlpha, AllSteps: true, Unit: unit})}
}
