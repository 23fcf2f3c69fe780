package schema

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// CheckVersion verifies that got is a version of want's major line.
// want and got look like "idpbench.step/v1"; "idpbench.step/v1.2" is accepted
// for v1 (minor versions only add fields).
func CheckVersion(name, want, got string) error {
	if got == "" {
		return fmt.Errorf("%s: no \"schema\" field (want %s)", name, want)
	}
	if got == want || strings.HasPrefix(got, want+".") {
		return nil
	}
	wantKind, _, _ := strings.Cut(want, "/")
	gotKind, _, _ := strings.Cut(got, "/")
	if wantKind != gotKind {
		return fmt.Errorf("%s: schema %q is not a %s record", name, got, wantKind)
	}
	return fmt.Errorf("%s: schema %q is not supported (this build reads %s)", name, got, want)
}

// DecodeStep reads one step record. name is used in errors (a file name or "-").
func DecodeStep(r io.Reader, name string) (*Step, error) {
	var s Step
	if err := decodeOne(r, name, StepV1, &s, func() string { return s.Schema }); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &s, nil
}

// DecodeColdstart reads one coldstart record.
func DecodeColdstart(r io.Reader, name string) (*Coldstart, error) {
	var c Coldstart
	if err := decodeOne(r, name, ColdstartV1, &c, func() string { return c.Schema }); err != nil {
		return nil, err
	}
	return &c, nil
}

// DecodeMeta reads one run meta record.
func DecodeMeta(r io.Reader, name string) (*Meta, error) {
	var m Meta
	if err := decodeOne(r, name, MetaV1, &m, func() string { return m.Schema }); err != nil {
		return nil, err
	}
	return &m, nil
}

func decodeOne(r io.Reader, name, want string, v any, schemaOf func() string) error {
	dec := json.NewDecoder(r)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", name, jsonErr(err))
	}
	return CheckVersion(name, want, schemaOf())
}

// DecodeSamples reads sampler JSON lines; line numbers appear in errors.
func DecodeSamples(r io.Reader, name string) ([]Sample, error) {
	dec := json.NewDecoder(r)
	var out []Sample
	for i := 1; ; i++ {
		var s Sample
		err := dec.Decode(&s)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", name, i, jsonErr(err))
		}
		if err := CheckVersion(fmt.Sprintf("%s: record %d", name, i), SampleV1, s.Schema); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
}

func jsonErr(err error) error {
	if err == io.EOF {
		return fmt.Errorf("empty file, want a JSON record")
	}
	return err
}

// Validate reports what a step record lacks that every reader relies on:
// its scenario, a known status, at least one connection, a measured window
// (unless the step is an error, which may never have measured) and counts
// that add up (requests = ok + failed). Errors name every problem found.
func (s *Step) Validate() error {
	var probs []string
	if s.Scenario == "" {
		probs = append(probs, "no scenario")
	}
	switch s.Status {
	case StatusComplete, StatusInterrupted, StatusTargetLost, StatusError:
	default:
		probs = append(probs, fmt.Sprintf("status %q is not complete, interrupted, target_lost or error", s.Status))
	}
	if s.Connections < 1 {
		probs = append(probs, fmt.Sprintf("connections %d (want at least 1)", s.Connections))
	}
	if s.Status != StatusError && (s.Start.IsZero() || s.End.Before(s.Start)) {
		probs = append(probs, "no measured window (start and end)")
	}
	if s.Requests != s.OK+s.Errors.Total() {
		probs = append(probs, fmt.Sprintf("requests %d != ok %d + failed %d", s.Requests, s.OK, s.Errors.Total()))
	}
	if len(probs) == 0 {
		return nil
	}
	return fmt.Errorf("not a valid step record: %s", strings.Join(probs, "; "))
}
