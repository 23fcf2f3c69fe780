package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/schema"
)

type phaseConfig struct {
	out, kind, name, product, session string
	start, end                        string // RFC 3339
	running                           string // --running: the file of the phase in progress
}

// record validates the flags and returns the phase record they describe.
func (c phaseConfig) record() (schema.Phase, error) {
	if c.out == "" {
		return schema.Phase{}, cli.Usagef("phase: --out is required (the phases file, e.g. RUN_DIR/%s)", schema.PhasesFile)
	}
	if !slices.Contains(schema.PhaseKinds(), c.kind) {
		return schema.Phase{}, cli.Usagef("phase: --kind %q: want one of %s", c.kind, strings.Join(schema.PhaseKinds(), ", "))
	}
	for _, f := range [][2]string{{"--name", c.name}, {"--session", c.session}} {
		if strings.TrimSpace(f[1]) == "" {
			return schema.Phase{}, cli.Usagef("phase: %s is required", f[0])
		}
	}
	start, err := parseTime("--start", c.start)
	if err != nil {
		return schema.Phase{}, err
	}
	end, err := parseTime("--end", c.end)
	if err != nil {
		return schema.Phase{}, err
	}
	p := schema.NewPhase(c.session, c.product, c.kind, c.name, start, end)
	if err := p.Validate(); err != nil {
		return schema.Phase{}, cli.Usagef("phase: --start, --end: %v", err)
	}
	return p, nil
}

func parseTime(flag, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, cli.Usagef("phase: %s %q: want an RFC 3339 time, e.g. 2026-11-30T10:00:00.250Z", flag, v)
	}
	return t.UTC(), nil
}

const phaseUsage = `Usage: aggregate phase --out FILE --kind KIND --name NAME [--product P]
                       --start TIME --end TIME --session ID
       aggregate phase --out FILE --session ID --running STATE
                       [--kind KIND --name NAME [--product P] [--start TIME]]

Appends one idpbench.phase/v1 record (one JSON line: session, product, kind,
name, start, end, seconds = end - start) to FILE, creating it when missing.
The line is written with one write to a file opened for appending, so
concurrent writers never interleave a record. aggregate report turns
RUN_DIR/phases.jsonl into the "Where the time goes" table. Kinds: ` + "build, database, install, coldstart, setup, ladder,\ngcjitter, teardown, report, other." + `

With --running, run-comparison.sh's form: the phase in progress lives in the
file STATE (kind, product, name, start), so a phase begun in one process is
ended by another. The phase STATE holds, if any, ends now: its record is
appended and "NAME took N s" printed. With --kind and --name the next phase
begins (at --start, default now: a session's first phase begins when the
session did) and STATE holds it; without, STATE is removed.
`

const phaseExample = `  aggregate phase --out results/quick/phases.jsonl --kind ladder --product hydra \
    --name "hydra ladder discovery" --session 20261130T100000Z-4242 \
    --start 2026-11-30T10:00:00.000Z --end 2026-11-30T10:01:30.250Z
`

func runPhase(_ context.Context, args []string, e env) error {
	var c phaseConfig
	fs := cli.NewFlagSet("phase")
	fs.StringVar(&c.out, "out", "", "append the record to `FILE` (created 0644 when missing)")
	fs.StringVar(&c.kind, "kind", "", "the phase's `KIND`: "+strings.Join(schema.PhaseKinds(), ", "))
	fs.StringVar(&c.name, "name", "", "the phase's `NAME` as logged, e.g. \"hydra ladder discovery\"")
	fs.StringVar(&c.product, "product", "", "the `PRODUCT` it belongs to (default \"\": a run-wide phase)")
	fs.StringVar(&c.start, "start", "", "when the phase began, an RFC 3339 `TIME` (fractional seconds allowed)")
	fs.StringVar(&c.end, "end", "", "when it ended, an RFC 3339 `TIME`, not before --start")
	fs.StringVar(&c.session, "session", "", "the `ID` of the session that ran it (each session of a resumed run has its own)")
	fs.StringVar(&c.running, "running", "", "end the phase in progress the file `STATE` holds, and begin the next one there")
	if err := parse(fs, args, phaseUsage, phaseExample, e); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("phase: unexpected argument %q (every value is a flag)", fs.Arg(0))
	}
	if c.running != "" {
		return c.next(time.Now().UTC(), e)
	}
	p, err := c.record()
	if err != nil {
		return err
	}
	return appendPhase(c.out, p)
}

// appendPhase appends p as one line to path with a single write.
func appendPhase(path string, p schema.Phase) error {
	line, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encoding the phase record: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	return nil
}

// running is the phase in progress, as --running's file holds it.
type running struct {
	Kind    string    `json:"kind"`
	Product string    `json:"product"`
	Name    string    `json:"name"`
	Start   time.Time `json:"start"`
}

// next ends the phase c.running holds (its record appended, "NAME took N s"
// printed) and, with --kind, begins the next one in its place.
func (c phaseConfig) next(now time.Time, e env) error {
	if c.end != "" {
		return cli.Usagef("phase: --end with --running: a running phase ends when the next begins")
	}
	begin := c.kind != "" || c.name != "" || c.product != ""
	if c.start == "" {
		c.start = now.Format(time.RFC3339Nano)
	}
	var nextPhase running
	if begin {
		c.end = c.start // only to check the flags of the phase that begins
		p, err := c.record()
		if err != nil {
			return err
		}
		nextPhase = running{Kind: p.Kind, Product: p.Product, Name: p.Name, Start: p.Start}
	} else if c.out == "" || strings.TrimSpace(c.session) == "" {
		return cli.Usagef("phase: --out and --session are required")
	}
	if b, err := os.ReadFile(c.running); err == nil {
		var r running
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("phase: %s: not a running phase: %w", c.running, err)
		}
		end := now
		if begin && nextPhase.Start.After(end) {
			end = nextPhase.Start
		}
		p := schema.NewPhase(c.session, r.Product, r.Kind, r.Name, r.Start, end)
		if err := p.Validate(); err != nil {
			return fmt.Errorf("phase: %s: %w", c.running, err)
		}
		if err := appendPhase(c.out, p); err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "%s took %.0f s\n", r.Name, p.Seconds)
	} else if !os.IsNotExist(err) {
		return fmt.Errorf("phase: %w", err)
	}
	if !begin {
		if err := os.Remove(c.running); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("phase: %w", err)
		}
		return nil
	}
	b, err := json.Marshal(nextPhase)
	if err != nil {
		return err
	}
	return atomicfile.Write(c.running, 0o644, append(b, '\n'), nil)
}
