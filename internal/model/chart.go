package model

// Point is one data point of a chart. Hollow draws an open marker (a
// driver-limited step: a lower bound).
type Point struct {
	X, Y   float64
	Hollow bool
}

// Series is one line of a chart: segments are drawn as separate runs (a gap
// between them is a gap in the data).
type Series struct {
	Name     string
	Style    int // index into the palette, markers and dashes: one per product across charts
	Segments [][]Point
}

// Chart is a line chart, rendered by WriteSVG.
type Chart struct {
	Title    string
	Subtitle string // one line under the title; "" = none
	XLabel   string // with unit
	YLabel   string // with unit
	XLog2    bool   // log2 x axis with a tick at every XTicks value
	XTicks   []float64
	Series   []Series
	// Bars draws grouped bars instead of lines: Groups are labelled along
	// x, each series has at most one bar per group, a point's X is its
	// group's index (a group without a point of the series has no bar).
	Bars   bool
	Groups []string
}

// Points returns every point of the series.
func (s Series) Points() []Point {
	var out []Point
	for _, seg := range s.Segments {
		out = append(out, seg...)
	}
	return out
}
