package product

import (
	"strings"

	"github.com/idpbench/idpbench/internal/schema"
)

// Compose is what compose mode (scripts/lib/compose.sh) adds to every
// product's meta.
type Compose struct {
	File        string // the product's compose file, from the repository root (Product.ComposeFile)
	MemoryLimit string // "service LIMIT, ..." in the file's order (provision compose limits)
	// Images are the images its containers ran (STATE/images.json, written
	// by compose mode once the product is ready); none when it did not get
	// that far.
	Images []schema.Image
}

// apply adds compose mode's settings and notes to m.
func (c Compose) apply(m *schema.Meta) {
	if m.Settings == nil {
		m.Settings = map[string]string{}
	}
	m.Settings["mode"] = ModeCompose
	m.Settings["memory_limit"] = c.MemoryLimit
	m.Settings["compose_file"] = c.File
	m.Images = c.Images
	m.Notes = append(m.Notes,
		"Compose mode ("+c.File+"): the product and its own PostgreSQL 15 in containers with memory limits ("+c.MemoryLimit+"); sampled as containers (sampler --docker idpbench-*).",
		"Compose cold start: coldstart times the attached `docker compose up` to the ready URL; mode A first drops the database volume; its peak is the memory of the product's containers (all but the database's; usage minus inactive page cache, the figure docker stats shows), not the compose client's.")
	var local []string
	for _, im := range c.Images {
		if im.Origin == schema.ImageLocal {
			local = append(local, im.Service+" "+im.Ref+" (for "+im.StandsFor+")")
		}
	}
	if len(local) > 0 {
		m.Notes = append(m.Notes, "Local equivalents of official images ran (the official ones could not be pulled here; built from Debian's packages and native mode's builds, scripts/lib/images.sh): "+strings.Join(local, ", ")+".")
	}
}
