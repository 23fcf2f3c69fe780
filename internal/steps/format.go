package steps

import (
	"math"
	"strconv"
	"strings"
)

// FormatQPS renders requests per second: 3 significant figures below 1000,
// an integer with Thousands separators from 1000 on.
func FormatQPS(q float64) string {
	return SigOrInt(q, 3)
}

// FormatMS renders milliseconds with 3 significant digits (integers with
// Thousands separators from 1000 ms on).
func FormatMS(ms float64) string {
	return SigOrInt(ms, 3)
}

// FormatPct renders a fraction (0.01 = 1%) as a percentage with at most 2
// significant digits: "0%", "0.01%", "2.3%", "5%", "100%".
func FormatPct(frac float64) string {
	p := frac * 100
	if p == 0 {
		return "0%"
	}
	s := strconv.FormatFloat(p, 'f', SigDecimals(p, 2), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + "%"
}

// Percent renders a value already in percent as a whole percentage: "42%".
func Percent(v float64) string {
	return strconv.FormatFloat(v, 'f', 0, 64) + "%"
}

// Plural is n with what, an "s" added unless n is 1: "1 round", "3 rounds".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// FormatSpread renders a spread in percent (Spread.Pct) to one decimal,
// as UnstablePct is judged: "±4%", "±0.5%", "±10.4%".
func FormatSpread(pct float64) string {
	return "±" + strings.TrimSuffix(strconv.FormatFloat(pct, 'f', 1, 64), ".0") + "%"
}

// FormatSeconds renders a duration in seconds without trailing zeros.
func FormatSeconds(s float64) string {
	return strconv.FormatFloat(math.Round(s*1000)/1000, 'f', -1, 64) + " s"
}

// SigOrInt renders v with sig significant digits, an integer with
// thousands separators from 1000 on; N/A for NaN and infinities.
func SigOrInt(v float64, sig int) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "N/A"
	case v == 0:
		return "0"
	}
	s := strconv.FormatFloat(v, 'f', SigDecimals(v, sig), 64)
	if r, err := strconv.ParseFloat(s, 64); err == nil && math.Abs(r) >= 1000 {
		return Thousands(int64(math.Round(v)))
	}
	return s
}

// SigDecimals is the number of decimals that shows v with sig significant digits.
func SigDecimals(v float64, sig int) int {
	d := sig - 1 - int(math.Floor(math.Log10(math.Abs(v))))
	return max(d, 0)
}

// Thousands renders n with comma Thousands separators.
func Thousands(n int64) string {
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
