package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// StepFile is one step record and where it came from (steps.File).
type StepFile = steps.File

// Window and Spread are the steps' (a measured window's span; a level's
// throughput spread).
type (
	Window = steps.Window
	Spread = steps.Spread
)

// MetaFile is one run meta record and where it came from.
type MetaFile struct {
	Path string
	Meta *schema.Meta
}

// ColdstartFile is one coldstart record and where it came from.
type ColdstartFile struct {
	Path      string
	Coldstart *schema.Coldstart
}

// KneeFile is one knee record (where round 1 of a ladder stopped) and where
// it came from.
type KneeFile struct {
	Path string
	Knee *schema.Knee
}

// SearchFile is one share search record (the highest sustained share
// below one a product did not sustain) and where it came from.
type SearchFile struct {
	Path   string
	Search *schema.Search
}

// SampleFile is the sampler records of one file.
type SampleFile struct {
	Path    string
	Samples []schema.Sample
}

// PhaseFile is the phase records of one file (run-comparison's phases.jsonl).
type PhaseFile struct {
	Path   string
	Phases []schema.Phase
}

// Inputs is every idpbench record found under the report's inputs, in walk
// order (lexical by path).
type Inputs struct {
	Steps      []StepFile
	Metas      []MetaFile
	Coldstarts []ColdstartFile
	Samples    []SampleFile
	Phases     []PhaseFile
	Knees      []KneeFile   // none in runs from before the knee rule
	Searches   []SearchFile // none in runs from before the sustain rule
}

// recordPrefix starts every idpbench schema string.
const recordPrefix = "idpbench."

// Load reads every *.json and *.jsonl file under paths (directories are
// walked recursively; a file is read as given; "-" reads a stream of JSON
// records from stdin). Records are dispatched by their "schema" field. A
// walked file whose records are not idpbench records is skipped with one
// call of warn, a file named in paths that holds none is a NoRecordsError;
// an idpbench record of another major version is an error naming the file.
func Load(ctx context.Context, paths []string, stdin io.Reader, warn func(msg string)) (*Inputs, error) {
	return load(ctx, paths, stdin, warn, false)
}

// LoadRequired is Load for a command's inputs: a directory named in paths
// that holds no idpbench record under it is a NoRecordsError too, as a
// file that holds none is (aggregate report on the wrong directory).
func LoadRequired(ctx context.Context, paths []string, stdin io.Reader, warn func(msg string)) (*Inputs, error) {
	return load(ctx, paths, stdin, warn, true)
}

// NoRecordsError is an input named on the command line that holds no
// idpbench record: a file, or (LoadRequired) a directory.
type NoRecordsError struct{ Path, Why string }

func (e NoRecordsError) Error() string { return e.Path + ": nothing to read: " + e.Why }

func load(ctx context.Context, paths []string, stdin io.Reader, warn func(msg string), dirs bool) (*Inputs, error) {
	in := &Inputs{}
	for _, p := range paths {
		before := in.records()
		if err := in.loadPath(ctx, p, stdin, warn); err != nil {
			return nil, err
		}
		if dirs && p != "-" && in.records() == before {
			return nil, NoRecordsError{p, "no idpbench record under it (*.json and *.jsonl files whose \"schema\" is idpbench.*)"}
		}
	}
	return in, nil
}

func (in *Inputs) loadPath(ctx context.Context, p string, stdin io.Reader, warn func(msg string)) error {
	if p == "-" {
		return in.loadStream(stdin, "-", warn)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	if !fi.IsDir() {
		// A file named as an input must hold records: one that holds none
		// is a mistake to say, not a file to skip as a walk does.
		before := in.records()
		var warnings []string
		if err := in.loadFile(p, func(msg string) { warnings = append(warnings, msg) }); err != nil {
			return err
		}
		if in.records() == before {
			why := "no record"
			if len(warnings) > 0 {
				why = strings.TrimPrefix(warnings[0], "ignoring "+p+": ")
			}
			return NoRecordsError{p, why}
		}
		for _, w := range warnings {
			warn(w)
		}
		return nil
	}
	return filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || !isRecordFile(path) {
			return nil
		}
		return in.loadFile(path, warn)
	})
}

// records counts the records loaded so far (a file of samples or phases
// counts once).
func (in *Inputs) records() int {
	return len(in.Steps) + len(in.Metas) + len(in.Coldstarts) + len(in.Samples) + len(in.Phases) + len(in.Knees) + len(in.Searches)
}

// isRecordFile reports whether a walked file may hold records.
func isRecordFile(path string) bool {
	return strings.HasSuffix(path, ".json") || strings.HasSuffix(path, ".jsonl")
}

func (in *Inputs) loadFile(path string, warn func(msg string)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	if filepath.Base(path) == schema.PhasesFile {
		return in.loadPhases(f, path)
	}
	return in.loadStream(f, path, warn)
}

// loadStream reads one or more JSON records from r (a .json file holds one,
// a .jsonl file or stdin holds many).
func (in *Inputs) loadStream(r io.Reader, name string, warn func(msg string)) error {
	dec := json.NewDecoder(r)
	var samples []schema.Sample
	warned := false // one warning per file
	for i := 1; ; i++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			if i == 1 && name != "-" {
				warn(fmt.Sprintf("ignoring %s: empty file", name))
			}
			break
		}
		if err != nil {
			return fmt.Errorf("reading %s: record %d: %w", name, i, err)
		}
		skip, err := in.addRecord(raw, name, i, &samples)
		if err != nil {
			return err
		}
		if skip != "" && !warned {
			warn(fmt.Sprintf("ignoring %s: %s", recordName(name, i), skip))
			warned = true
		}
	}
	if len(samples) > 0 {
		in.Samples = append(in.Samples, SampleFile{Path: name, Samples: samples})
	}
	return nil
}

func recordName(name string, i int) string {
	if i == 1 {
		return name
	}
	return fmt.Sprintf("%s: record %d", name, i)
}

// addRecord decodes record i of file path by its schema. It returns a
// non-empty skip reason for a record that is not an idpbench record this
// build knows.
func (in *Inputs) addRecord(raw json.RawMessage, path string, i int, samples *[]schema.Sample) (string, error) {
	name := recordName(path, i)
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(raw, &head); err != nil || !strings.HasPrefix(head.Schema, recordPrefix) {
		return fmt.Sprintf("not an idpbench record (schema %q)", head.Schema), nil
	}
	kind, _, _ := strings.Cut(head.Schema, "/")
	r := bytes.NewReader(raw)
	switch kind {
	case kindOf(schema.StepV1):
		s, err := schema.DecodeStep(r, name)
		if err == nil {
			in.Steps = append(in.Steps, StepFile{Path: path, Step: s})
		}
		return "", err
	case kindOf(schema.MetaV1):
		m, err := schema.DecodeMeta(r, name)
		if err == nil {
			in.Metas = append(in.Metas, MetaFile{Path: path, Meta: m})
		}
		return "", err
	case kindOf(schema.ColdstartV1):
		c, err := schema.DecodeColdstart(r, name)
		if err == nil {
			in.Coldstarts = append(in.Coldstarts, ColdstartFile{Path: path, Coldstart: c})
		}
		return "", err
	case kindOf(schema.SampleV1):
		return "", addSample(r, name, samples)
	case kindOf(schema.PhaseV1):
		p, err := schema.DecodePhase(r, name)
		if err == nil {
			in.addPhases(path, *p)
		}
		return "", err
	case kindOf(schema.KneeV1):
		k, err := schema.DecodeKnee(r, name)
		if err == nil {
			in.Knees = append(in.Knees, KneeFile{Path: path, Knee: k})
		}
		return "", err
	case kindOf(schema.SearchV1):
		k, err := schema.DecodeSearch(r, name)
		if err == nil {
			in.Searches = append(in.Searches, SearchFile{Path: path, Search: k})
		}
		return "", err
	case kindOf(schema.FactsV1):
		return "readback's facts are read from the product's meta, which holds them", nil
	}
	// An idpbench record this build does not know is not skipped: its
	// numbers would silently be missing from the report.
	return "", fmt.Errorf("%s: unknown idpbench record kind %q (this build reads %s, %s, %s, %s, %s and %s)", name, head.Schema,
		schema.StepV1, schema.MetaV1, schema.ColdstartV1, schema.SampleV1, schema.KneeV1, schema.SearchV1)
}

func addSample(r io.Reader, name string, samples *[]schema.Sample) error {
	s, err := schema.DecodeSamples(r, name)
	*samples = append(*samples, s...)
	return err
}

// kindOf returns "idpbench.step" for "idpbench.step/v1".
func kindOf(schemaString string) string {
	kind, _, _ := strings.Cut(schemaString, "/")
	return kind
}
