package experiment

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/compare"
	"github.com/idpbench/idpbench/internal/schema"
)

// WarmupCheck is one warmup check: does the stability warmup rule reach the
// throughput a fixed long warmup reaches? Two runs of one product's ladder,
// arm "fixed" (a fixed warmup) and arm "rule" (the profile's rule), then
// every level compared (DIR/compare.md) and the warmups each step spent
// (DIR/warmups.tsv).
type WarmupCheck struct {
	Product, Scenario string
	FixedS            int    // the fixed arm's warmup, seconds
	Repeats           int    // windows per level in each arm
	Out               string // DIR; "" = IDPBENCH_ROOT/results/warmup-check/PRODUCT-SCENARIO
}

// Arms of the warmup check, in the order they run.
const (
	ArmFixed = "fixed"
	ArmRule  = "rule"
)

// Validate checks the configuration; its errors are usage errors.
func (w WarmupCheck) Validate() error {
	switch {
	case w.Product == "":
		return cli.Usagef("--product wants a product name")
	case w.Scenario == "":
		return cli.Usagef("--scenario wants a scenario name")
	case w.FixedS < 1:
		return cli.Usagef("--fixed wants whole seconds (got %d)", w.FixedS)
	case w.Repeats < 1:
		return cli.Usagef("--repeats wants a positive number (got %d)", w.Repeats)
	}
	return nil
}

// Run runs both arms (the run tool resumes each), compares them, writes
// the warmups and prints the comparison on stdout.
func (w WarmupCheck) Run(ctx context.Context, e Env) error {
	bin, out, runs, err := e.dirs(w.Out, func(root string) string {
		return filepath.Join(root, "results", "warmup-check", w.Product+"-"+w.Scenario)
	})
	if err != nil {
		return err
	}
	ladder := e.getenvOr("IDPBENCH_LADDER", "2 8 32")
	common := []string{"IDPBENCH_RESULTS=" + runs, "IDPBENCH_SCENARIOS=" + w.Scenario, "IDPBENCH_LADDER=" + ladder,
		"IDPBENCH_FULL_LADDER=1", "IDPBENCH_GCJITTER_S=" + e.getenvOr("IDPBENCH_GCJITTER_S", "5")}
	// The fixed arm is the rule run to its cap every time (a tolerance no
	// series meets, no JIT condition): the same fixed warmup, with every
	// second's throughput and JIT recorded (warmup_qps, jit.warmup_pct).
	arms := []struct {
		name string
		vars []string
	}{
		{ArmFixed, []string{"IDPBENCH_WARMUP_S=1", "IDPBENCH_WARMUP_MAX_S=" + strconv.Itoa(w.FixedS),
			"IDPBENCH_WARMUP_TOLERANCE_PCT=0.01", "IDPBENCH_WARMUP_JIT_MAX_PCT=0"}},
		{ArmRule, nil},
	}
	for _, arm := range arms {
		e.Log.Printf("arm %s: %s %s, ladder %s, %d windows a level (%s)", arm.name, w.Product, w.Scenario, ladder, w.Repeats, strings.Join(arm.vars, " "))
		logPath := filepath.Join(runs, arm.name+".log")
		args := []string{"--only", w.Product, "--repeats", strconv.Itoa(w.Repeats), "--run-id", arm.name}
		if err := runTool(ctx, e, bin, logPath, args, append(slices.Clone(common), arm.vars...)); err != nil {
			if errors.Is(err, context.Canceled) {
				return err
			}
			return fmt.Errorf("arm %s failed (log: %s): %w", arm.name, logPath, err)
		}
	}
	return w.analyse(ctx, e, out)
}

// analyse writes DIR/compare.md and DIR/warmups.tsv from the arms' runs.
func (w WarmupCheck) analyse(ctx context.Context, e Env, out string) error {
	warn := func(msg string) { e.Log.Printf("warning: %s", msg) }
	var sides [2]compare.Side
	for i, arm := range []string{ArmFixed, ArmRule} {
		s, err := loadSide(ctx, filepath.Join(out, "runs", arm, w.Product), warn)
		if err != nil {
			return fmt.Errorf("comparing the arms: %w", err)
		}
		sides[i] = s
	}
	var md bytes.Buffer
	if err := compare.Write(&md, compareAll(sides[0], sides[1], compare.UnitWindow), compare.FormatMarkdown); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(out, "compare.md"), 0o644, md.Bytes(), nil); err != nil {
		return err
	}
	table, err := w.warmups(out)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(out, "warmups.tsv"), 0o644, []byte(table), nil); err != nil {
		return err
	}
	e.Log.Printf("comparison: %s; warmups: %s", filepath.Join(out, "compare.md"), filepath.Join(out, "warmups.tsv"))
	_, err = e.Stdout.Write(md.Bytes())
	return err
}

// WarmupsHeader is the first line of warmups.tsv.
const WarmupsHeader = "arm\tstart\tconnections\trepeat\twarmup_s\twarmup_stable\tqps\tjit_window_pct\tjit_warmup_pct_by_10s\n"

// warmups is warmups.tsv: a row per step file of the scenario in each
// arm's product directory, sorted by arm, then start.
func (w WarmupCheck) warmups(out string) (string, error) {
	var rows [][]string
	for _, arm := range []string{ArmFixed, ArmRule} {
		files, err := filepath.Glob(filepath.Join(out, "runs", arm, w.Product, w.Scenario+"-c*.json"))
		if err != nil {
			return "", err
		}
		if len(files) == 0 {
			return "", fmt.Errorf("arm %s: no step files %s-c*.json in %s", arm, w.Scenario, filepath.Join(out, "runs", arm, w.Product))
		}
		for _, f := range files {
			st, err := readStep(f)
			if err != nil {
				return "", err
			}
			rows = append(rows, WarmupRow(arm, st))
		}
	}
	slices.SortFunc(rows, func(a, b []string) int {
		return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]), slices.Compare(a, b))
	})
	var b strings.Builder
	b.WriteString(WarmupsHeader)
	for _, r := range rows {
		b.WriteString(strings.Join(r, "\t") + "\n")
	}
	return b.String(), nil
}

func readStep(path string) (*schema.Step, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return schema.DecodeStep(f, path)
}

// WarmupRow is one step's row of warmups.tsv: arm, start, connections,
// repeat (label, default 1), the warmup spent (seconds, to 0.1), whether
// the rule found it stable ("fixed" in the fixed arm; empty when not
// recorded), qps, the JIT's share over the window (N/A when not watched)
// and its share during the warmup averaged over each 10 s (the last
// average over what is left), rounded, space separated.
func WarmupRow(arm string, st *schema.Step) []string {
	stable := "fixed"
	if arm != ArmFixed {
		stable = ""
		if st.WarmupStable != nil {
			stable = strconv.FormatBool(*st.WarmupStable)
		}
	}
	jitWindow, jitWarmup := "N/A", ""
	if st.JIT != nil {
		if st.JIT.WindowPct != nil {
			jitWindow = jsonNum(*st.JIT.WindowPct)
		}
		jitWarmup = by10s(st.JIT.WarmupPct)
	}
	return []string{arm, st.Start.Format(time.RFC3339Nano), strconv.Itoa(st.Connections), cmp.Or(st.Labels["repeat"], "1"),
		jsonNum(math.Round(st.WarmupS*10) / 10), stable, jsonNum(st.QPS), jitWindow, jitWarmup}
}

// by10s averages pct over each run of 10 values, rounded, space separated.
func by10s(pct []float64) string {
	var avgs []string
	for c := range slices.Chunk(pct, 10) {
		sum := 0.0
		for _, v := range c {
			sum += v
		}
		avgs = append(avgs, jsonNum(math.Round(sum/float64(len(c)))))
	}
	return strings.Join(avgs, " ")
}

// jsonNum writes v as the step file does (encoding/json): 12.3, 60, 1234567.5.
func jsonNum(v float64) string {
	b, err := json.Marshal(v)
	if err != nil { // NaN or ±Inf: not in a valid step file
		return ""
	}
	return string(b)
}
