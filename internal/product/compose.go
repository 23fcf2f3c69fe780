package product

import "github.com/idpbench/idpbench/internal/schema"

// Compose is what compose mode (scripts/lib/compose.sh) adds to every
// product's meta.
type Compose struct {
	File        string // the product's compose file, from the repository root (Product.ComposeFile)
	MemoryLimit string // "service LIMIT, ..." in the file's order (provision compose limits)
}

// apply adds compose mode's settings and notes to m.
func (c Compose) apply(m *schema.Meta) {
	if m.Settings == nil {
		m.Settings = map[string]string{}
	}
	m.Settings["mode"] = ModeCompose
	m.Settings["memory_limit"] = c.MemoryLimit
	m.Settings["compose_file"] = c.File
	m.Settings["compose_validation"] = "static only: compose mode was written and checked on a machine without a Docker engine"
	m.Notes = append(m.Notes,
		"Compose mode ("+c.File+"): the product and its own PostgreSQL 15 in containers with memory limits ("+c.MemoryLimit+"); sampled as containers (sampler --docker idpbench-*).",
		"Compose mode was validated statically only (deploy/compose tests, mode_test.go): no container was started where it was written.",
		"Compose cold start: coldstart times the attached `docker compose up` to the ready URL; mode A first drops the database volume; the peak RSS it records is the compose client's, not the containers'.")
}
