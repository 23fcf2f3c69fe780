// Package report renders a comparison's model (internal/model) as Markdown
// (WriteMarkdown, COMPARISON.md) and SVG charts (WriteCharts, WriteSVG,
// WriteMultiples). It reads the Report that model.Build made and computes
// no figure of its own: a number it prints is the model's, formatted.
package report
