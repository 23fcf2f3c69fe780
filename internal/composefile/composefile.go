// Package composefile loads the compose files, each product's
// (products/NAME/compose.yml) and the shared ones of deploy/compose,
// strictly: unknown keys fail the load, and every service's extends chain
// is resolved the way compose resolves the keys these files use.
// deploy/compose's tests and the product contract check the files through
// it; provision compose writes the placement override and reads the memory
// limits through it.
package composefile

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// doc is the top level of a compose file.
type doc struct {
	Name     string                    `yaml:"name"`
	Services map[string]map[string]any `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
	Networks map[string]any            `yaml:"networks"`
	Secrets  map[string]any            `yaml:"secrets"`
	Configs  map[string]any            `yaml:"configs"`

	order []string // the service names in the file's order
}

// Service holds the keys deploy/compose's checks read, plus the other keys
// these files use, so strict decoding rejects anything else.
type Service struct {
	Image         string       `yaml:"image"`
	Build         any          `yaml:"build"`
	PullPolicy    string       `yaml:"pull_policy"`
	ContainerName string       `yaml:"container_name"`
	Restart       string       `yaml:"restart"`
	User          string       `yaml:"user"`
	Command       any          `yaml:"command"`
	Environment   any          `yaml:"environment"`
	Volumes       []any        `yaml:"volumes"`
	ShmSize       string       `yaml:"shm_size"`
	Ports         []any        `yaml:"ports"`
	NetworkMode   string       `yaml:"network_mode"`
	Healthcheck   *Healthcheck `yaml:"healthcheck"`
	DependsOn     any          `yaml:"depends_on"`
	MemLimit      string       `yaml:"mem_limit"`
	Deploy        struct {
		Resources struct {
			Limits struct {
				Memory string `yaml:"memory"`
			} `yaml:"limits"`
		} `yaml:"resources"`
	} `yaml:"deploy"`
}

// Healthcheck is a service's healthcheck.
type Healthcheck struct {
	Test        any    `yaml:"test"`
	Interval    string `yaml:"interval"`
	Timeout     string `yaml:"timeout"`
	Retries     int    `yaml:"retries"`
	StartPeriod string `yaml:"start_period"`
	Disable     bool   `yaml:"disable"`
}

// Project is one compose file with every service's extends resolved.
type Project struct {
	File     string // the path Load was given, for messages (every product's file is compose.yml)
	Services map[string]Service
	Order    []string // the service names in the file's order
}

// Names returns the service names in sorted order, so problems come out in a
// stable order.
func (p Project) Names() []string {
	names := make([]string, 0, len(p.Services))
	for n := range p.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Load parses path and resolves `extends` the way compose does for the
// keys these files use: mappings merge key by key, ports and volumes
// append, everything else is replaced by the extending service.
func Load(path string) (Project, error) {
	d, err := readDoc(path)
	if err != nil {
		return Project{}, err
	}
	p := Project{File: path, Services: map[string]Service{}, Order: d.order}
	for name, raw := range d.Services {
		merged, err := resolve(filepath.Dir(path), raw, 0)
		if err != nil {
			return Project{}, fmt.Errorf("%s: service %q: %w", p.File, name, err)
		}
		s, err := decodeService(merged)
		if err != nil {
			return Project{}, fmt.Errorf("%s: service %q: %w", p.File, name, err)
		}
		p.Services[name] = s
	}
	return p, nil
}

// readDoc parses a compose file strictly: top-level keys other than the
// known ones and x- extension fields, and service keys the service type does
// not list (a misspelt "healtcheck"), fail the load instead of being ignored.
func readDoc(path string) (doc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return doc{}, err
	}
	var top map[string]any
	if err := yaml.Unmarshal(b, &top); err != nil {
		return doc{}, fmt.Errorf("parsing %s: %w", path, err)
	}
	for k := range top {
		if strings.HasPrefix(k, "x-") {
			delete(top, k)
		}
	}
	var d doc
	if err := strictRecode(top, &d); err != nil {
		return doc{}, fmt.Errorf("parsing %s: %w", path, err)
	}
	if len(d.Services) == 0 {
		return doc{}, fmt.Errorf("%s: no services", path)
	}
	d.order, err = serviceOrder(b)
	if err != nil {
		return doc{}, fmt.Errorf("parsing %s: %w", path, err)
	}
	return d, nil
}

// serviceOrder returns the keys of the top-level services mapping in the
// order the file writes them (a Go map forgets it).
func serviceOrder(b []byte) ([]string, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	if len(root.Content) == 0 {
		return nil, nil
	}
	top := root.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "services" {
			continue
		}
		var names []string
		svcs := top.Content[i+1]
		for j := 0; j+1 < len(svcs.Content); j += 2 {
			names = append(names, svcs.Content[j].Value)
		}
		return names, nil
	}
	return nil, nil
}

// strictRecode encodes v as YAML and decodes it into out, refusing unknown
// fields. Anchors and merge keys (<<) are already resolved in v.
func strictRecode(v, out any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(out)
}

// resolve returns raw with its extends chain merged in (depth-bounded).
func resolve(dir string, raw map[string]any, depth int) (map[string]any, error) {
	ext, ok := raw["extends"]
	if !ok {
		return normalizeEnv(raw), nil
	}
	if depth > 4 {
		return nil, fmt.Errorf("extends: chain too deep")
	}
	e, ok := ext.(map[string]any)
	file, _ := e["file"].(string)
	name, _ := e["service"].(string)
	if !ok || file == "" || name == "" {
		return nil, fmt.Errorf("extends: want {file, service}")
	}
	d, err := readDoc(filepath.Join(dir, file))
	if err != nil {
		return nil, fmt.Errorf("extends: %w", err)
	}
	base, ok := d.Services[name]
	if !ok {
		return nil, fmt.Errorf("extends: %s has no service %q", file, name)
	}
	resolved, err := resolve(filepath.Dir(filepath.Join(dir, file)), base, depth+1)
	if err != nil {
		return nil, err
	}
	override := normalizeEnv(raw)
	delete(override, "extends")
	return merge(resolved, override), nil
}

// normalizeEnv returns a copy of raw with a list-form environment
// ("K=V" entries) turned into a mapping, so the two forms merge.
func normalizeEnv(raw map[string]any) map[string]any {
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		out[k] = v
	}
	list, ok := raw["environment"].([]any)
	if !ok {
		return out
	}
	env := map[string]any{}
	for _, item := range list {
		k, v, _ := strings.Cut(fmt.Sprint(item), "=")
		env[k] = v
	}
	out["environment"] = env
	return out
}

var appendedKeys = map[string]bool{"ports": true, "volumes": true, "expose": true}

func merge(base, override map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(override))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range override {
		bm, bok := out[k].(map[string]any)
		om, ook := v.(map[string]any)
		bl, blok := out[k].([]any)
		ol, olok := v.([]any)
		switch {
		case bok && ook:
			out[k] = merge(bm, om)
		case appendedKeys[k] && blok && olok:
			out[k] = append(append([]any{}, bl...), ol...)
		default:
			out[k] = v
		}
	}
	return out
}

// decodeService decodes a merged raw mapping strictly.
func decodeService(raw map[string]any) (Service, error) {
	var s Service
	err := strictRecode(raw, &s)
	return s, err
}

// Env returns the service's environment as a mapping (values as text).
func (s Service) Env() map[string]string {
	out := map[string]string{}
	switch e := s.Environment.(type) {
	case map[string]any:
		for k, v := range e {
			if v == nil {
				out[k] = ""
				continue
			}
			out[k] = fmt.Sprint(v)
		}
	case []any:
		for _, item := range e {
			k, v, _ := strings.Cut(fmt.Sprint(item), "=")
			out[k] = v
		}
	}
	return out
}

// Args returns the command as a list of words (a string command is split
// on white space, which is enough for the checks).
func (s Service) Args() []string {
	switch c := s.Command.(type) {
	case string:
		return strings.Fields(c)
	case []any:
		out := make([]string, len(c))
		for i, v := range c {
			out[i] = fmt.Sprint(v)
		}
		return out
	}
	return nil
}

// Dependencies returns depends_on as name -> condition; the list form has
// no conditions, so its entries map to "".
func (s Service) Dependencies() map[string]string {
	out := map[string]string{}
	switch d := s.DependsOn.(type) {
	case []any:
		for _, n := range d {
			out[fmt.Sprint(n)] = ""
		}
	case map[string]any:
		for n, v := range d {
			m, _ := v.(map[string]any)
			cond, _ := m["condition"].(string)
			out[n] = cond
		}
	}
	return out
}

// imageVar is an image written as one variable with a default,
// ${IDPBENCH_IMAGE_NAME:-REF}: REF is the official image a reader who can
// pull runs; compose mode sets the variable to a local equivalent when the
// official one cannot be pulled (scripts/lib/images.sh).
var imageVar = regexp.MustCompile(`^\$\{(IDPBENCH_IMAGE_[A-Z0-9_]+):-([^${}]+)\}$`)

// ImageVar returns the variable and its default when the image is
// ${IDPBENCH_IMAGE_NAME:-REF}; ok is false for any other image.
func (s Service) ImageVar() (name, def string, ok bool) {
	m := imageVar.FindStringSubmatch(s.Image)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// DefaultImage returns the image compose runs when no variable is set: the
// default of ${IDPBENCH_IMAGE_NAME:-REF}, else the image as written.
func (s Service) DefaultImage() string {
	if _, def, ok := s.ImageVar(); ok {
		return def
	}
	return s.Image
}

// Memory returns the memory limit from deploy.resources.limits.memory or
// mem_limit.
func (s Service) Memory() string {
	if m := s.Deploy.Resources.Limits.Memory; m != "" {
		return m
	}
	return s.MemLimit
}

// Recipe returns where compose builds the service's image: the build
// context as the file writes it (compose's default ".", the project
// directory, when a build mapping names none) and the Dockerfile within it
// (compose's default "Dockerfile" unless build.dockerfile names another);
// "" for both when the service builds nothing.
func (s Service) Recipe() (context, dockerfile string) {
	switch b := s.Build.(type) {
	case string:
		return b, "Dockerfile"
	case map[string]any:
		context, _ = b["context"].(string)
		dockerfile, _ = b["dockerfile"].(string)
		return cmp.Or(context, "."), cmp.Or(dockerfile, "Dockerfile")
	}
	return "", ""
}
