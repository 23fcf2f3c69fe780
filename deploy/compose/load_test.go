package compose

import "github.com/idpbench/idpbench/internal/composefile"

// The files are loaded by internal/composefile (provision compose reads
// them through it too); these names keep the checks short.
type (
	project = composefile.Project
	service = composefile.Service
)

func loadProject(path string) (project, error) { return composefile.Load(path) }
