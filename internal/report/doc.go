// Package report turns idpbench result files into a comparison: it loads
// step, meta, coldstart and sample records from run directories (Load),
// builds a Report model from them (Build), and renders that model as
// Markdown (WriteMarkdown) and SVG charts (WriteCharts, WriteSVG). It also
// merges the step files of several load agents into one exact step (Merge)
// and prints one line per step for shell pipes (WriteSummary).
//
// Build computes every figure before any rendering: each ladder's levels
// (the windows of one connection count, with their spread) and its steady
// level (SelectSteadyLevel), per product the memory, CPU and database
// figures inside the steady-state windows with a bottleneck verdict
// (Verdict), cold starts A and B, and the GC-jitter P99 spread with its
// gaps (IntervalGaps). Missing data becomes a Figure or NA reason, never a
// missing row: renderers only format.
package report
