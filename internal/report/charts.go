package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/model"
)

// RenderChart returns the SVG document of one chart.
func RenderChart(cf model.ChartFile) ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteSVG(&buf, cf.Chart); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", cf.Name, err)
	}
	return buf.Bytes(), nil
}

// WriteCharts writes every chart of r into dir (created if missing), each
// file atomically.
func WriteCharts(dir string, r *model.Report) error {
	if len(r.Charts) == 0 && len(r.Verdicts) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if len(r.Verdicts) > 0 {
		var buf bytes.Buffer
		if err := WriteMultiples(&buf, r.VerdictMultiples()); err != nil {
			return fmt.Errorf("rendering %s: %w", model.VerdictChart, err)
		}
		if err := atomicfile.Write(filepath.Join(dir, model.VerdictChart), 0o644, buf.Bytes(), nil); err != nil {
			return err
		}
	}
	for _, cf := range r.Charts {
		b, err := RenderChart(cf)
		if err != nil {
			return err
		}
		if err := atomicfile.Write(filepath.Join(dir, cf.Name), 0o644, b, nil); err != nil {
			return err
		}
	}
	return nil
}
