// Package report turns idpbench result files into a comparison: it loads
// step, meta, coldstart and sample records from run directories (Load),
// builds a Report model from them (Build), and renders that model as
// Markdown (WriteMarkdown). It also merges the step files of several load
// agents into one exact step (Merge) and prints one line per step for shell
// pipes (WriteSummary).
//
// The model is built first and rendered second so that more sections
// (memory, cold start, GC jitter, SVG charts) can be added as renderers over
// the same Report without touching the loading or selection rules.
package report
