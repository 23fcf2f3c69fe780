package model

import (
	"github.com/idpbench/idpbench/internal/steps"
)

// FormatInterval is the text form of a capacity or ratio, the same in the
// report, aggregate compare and the experiments: "1,234 [1,201, 1,260]", the
// median alone with the reason where there is no interval
// ("1,234 (3 windows, no 95% interval: needs 6)"), "–" without a median;
// unit follows the figures (" iter/s").
func FormatInterval(iv Interval, format func(float64) string, unit string) string {
	switch {
	case iv.N == 0:
		return "–"
	case !iv.OK():
		return format(iv.Center) + unit + " (" + iv.NA + ")"
	}
	return format(iv.Center) + " [" + format(iv.Lo) + ", " + format(iv.Hi) + "]" + unit
}

// FormatRatio renders a ratio with 2 significant digits and a "×": "0.33×".
func FormatRatio(v float64) string {
	return steps.SigOrInt(v, 2) + "×"
}
