package servermetrics

import (
	"fmt"
	"io"
	"os"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families is a parsed exposition: metric families by name.
type Families map[string]*dto.MetricFamily

// Parse parses the Prometheus text exposition in r; name (the file) heads
// the error, and expfmt's error says the line.
func Parse(name string, r io.Reader) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", name, err)
	}
	return fams, nil
}

// ParseFile parses the exposition in the file at path.
func ParseFile(path string) (Families, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading server metrics: %w", err)
	}
	defer f.Close()
	return Parse(path, f)
}
