package report

import (
	"math"
	"strconv"
	"strings"
)

// FormatQPS renders requests per second: 3 significant figures below 1000,
// an integer with thousands separators from 1000 on.
func FormatQPS(q float64) string {
	return sigOrInt(q, 3)
}

// FormatMS renders milliseconds with 3 significant digits (integers with
// thousands separators from 1000 ms on).
func FormatMS(ms float64) string {
	return sigOrInt(ms, 3)
}

// formatPct renders a fraction (0.01 = 1%) as a percentage with at most 2
// significant digits: "0%", "0.01%", "2.3%", "5%", "100%".
func formatPct(frac float64) string {
	p := frac * 100
	if p == 0 {
		return "0%"
	}
	s := strconv.FormatFloat(p, 'f', sigDecimals(p, 2), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + "%"
}

// formatSpread renders a spread in percent (Spread.Pct) to one decimal,
// as UnstablePct is judged: "±4%", "±0.5%", "±10.4%".
func formatSpread(pct float64) string {
	return "±" + strings.TrimSuffix(strconv.FormatFloat(pct, 'f', 1, 64), ".0") + "%"
}

// formatSeconds renders a duration in seconds without trailing zeros.
func formatSeconds(s float64) string {
	return strconv.FormatFloat(math.Round(s*1000)/1000, 'f', -1, 64) + " s"
}

func sigOrInt(v float64, sig int) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "N/A"
	case v == 0:
		return "0"
	}
	s := strconv.FormatFloat(v, 'f', sigDecimals(v, sig), 64)
	if r, err := strconv.ParseFloat(s, 64); err == nil && math.Abs(r) >= 1000 {
		return thousands(int64(math.Round(v)))
	}
	return s
}

// sigDecimals is the number of decimals that shows v with sig significant digits.
func sigDecimals(v float64, sig int) int {
	d := sig - 1 - int(math.Floor(math.Log10(math.Abs(v))))
	return max(d, 0)
}

// thousands renders n with comma thousands separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// FormatInterval renders a capacity or ratio: "1,234 [1,201, 1,260]", the
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
	return sigOrInt(v, 2) + "×"
}
