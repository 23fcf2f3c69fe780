package model

// Multiples is a chart of small multiples: one panel per scenario, each a
// set of horizontal bars on its own log10 axis (a product's capacity
// beside another's ten times larger stays readable), each bar with its
// interval as a whisker and its value and note written beside it.
type Multiples struct {
	Title, Subtitle string
	XLabel          string // with unit
	Panels          []Panel
}

// Panel is one scenario's bars, top to bottom.
type Panel struct {
	Title string
	Bars  []Bar
}

// Bar is one product's figure in a panel.
type Bar struct {
	Label         string
	Value, Lo, Hi float64 // Lo, Hi 0: no whisker
	Style         int     // its colour (seriesColor)
	Muted         bool    // drawn in grey: not a contestant (the reference OP)
	Note          string  // written after the value, e.g. "0.68×"
}
