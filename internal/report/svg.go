package report

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/steps"
)

// Chart geometry, px.
const (
	svgWidth    = 900
	svgHeight   = 540
	plotLeft    = 88
	plotRight   = svgWidth - 210
	plotTop     = 70
	plotBottom  = svgHeight - 66
	legendX     = plotRight + 24
	legendRow   = 24
	legendChars = 20 // longer series names are cut
	minTickGap  = 34 // px between x tick labels
)

// seriesColor is Okabe and Ito's colour-blind-safe set (yellow left out:
// it is unreadable on white). Markers and dash patterns vary too, so lines
// stay apart in greyscale.
func seriesColor(style int) string {
	colors := [...]string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}
	return colors[style%len(colors)]
}

// dashAttr is the style's stroke-dasharray attribute ("" = solid).
func dashAttr(style int) string {
	dashes := [...]string{"", "8 4", "2 3", "10 3 2 3"}
	if d := dashes[style%len(dashes)]; d != "" {
		return fmt.Sprintf(" stroke-dasharray=\"%s\"", d)
	}
	return ""
}

// axis maps data values to pixels.
type axis struct {
	lo, hi     float64 // data domain (log2 values on a log axis)
	pxLo, pxHi float64
	log2       bool
}

func (a axis) px(v float64) float64 {
	if a.log2 {
		v = math.Log2(v)
	}
	if a.hi == a.lo {
		return (a.pxLo + a.pxHi) / 2
	}
	return a.pxLo + (v-a.lo)/(a.hi-a.lo)*(a.pxHi-a.pxLo)
}

// WriteSVG renders c as a self-contained SVG document: explicit size and
// viewBox, white background, system sans-serif font, no scripts.
func WriteSVG(w io.Writer, chart model.Chart) error {
	b := bufio.NewWriter(w)
	c := svgChart{chart}
	c.writeHead(b)
	if c.Bars {
		c.writeBars(b)
		fmt.Fprintf(b, "</svg>\n")
		return b.Flush()
	}
	x, xticks := c.xAxis()
	y, yticks := c.yAxis()
	writeGrid(b, x, xticks, y, yticks, c.XLog2)
	c.writeAxisLabels(b)
	for _, s := range c.Series {
		writeSeries(b, s, x, y)
	}
	c.writeLegend(b)
	fmt.Fprintf(b, "</svg>\n")
	return b.Flush()
}

// svgChart draws a chart of the model.
type svgChart struct{ model.Chart }

// writeHead writes the document's start, background and titles.
func (c svgChart) writeHead(b *bufio.Writer) {
	fmt.Fprintf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"13\" role=\"img\">\n",
		svgWidth, svgHeight, svgWidth, svgHeight)
	fmt.Fprintf(b, "<title>%s</title>\n", esc(c.Title))
	fmt.Fprintf(b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", svgWidth, svgHeight)
	c.writeTitles(b)
}

func (c svgChart) writeTitles(b *bufio.Writer) {
	fmt.Fprintf(b, "<text x=\"%d\" y=\"28\" font-size=\"18\" font-weight=\"bold\" fill=\"#222222\">%s</text>\n", plotLeft, esc(c.Title))
	if c.Subtitle != "" {
		fmt.Fprintf(b, "<text x=\"%d\" y=\"50\" font-size=\"13\" fill=\"#555555\">%s</text>\n", plotLeft, esc(c.Subtitle))
	}
}

func (c svgChart) writeAxisLabels(b *bufio.Writer) {
	fmt.Fprintf(b, "<text class=\"axis-label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#222222\">%s</text>\n",
		(plotLeft+plotRight)/2, svgHeight-18, esc(c.XLabel))
	cy := (plotTop + plotBottom) / 2
	fmt.Fprintf(b, "<text class=\"axis-label\" x=\"22\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 22 %d)\" fill=\"#222222\">%s</text>\n",
		cy, cy, esc(c.YLabel))
}

// xAxis returns the x axis and its ticks.
func (c svgChart) xAxis() (axis, []float64) {
	lo, hi := c.extent(func(p model.Point) float64 { return p.X })
	if c.XLog2 {
		ticks := c.XTicks
		if len(ticks) == 0 {
			ticks = []float64{lo, hi}
		}
		l, h := math.Log2(max(lo, 1e-9)), math.Log2(max(hi, 1e-9))
		const pad = 0.3 // log2 units, keeps the end markers off the frame
		return axis{lo: l - pad, hi: h + pad, pxLo: plotLeft, pxHi: plotRight, log2: true}, ticks
	}
	top, ticks := niceTicks(hi)
	return axis{lo: 0, hi: top, pxLo: plotLeft, pxHi: plotRight}, ticks
}

// yAxis starts at zero: a chart that does not is easily misread.
func (c svgChart) yAxis() (axis, []float64) {
	_, hi := c.extent(func(p model.Point) float64 { return p.Y })
	top, ticks := niceTicks(hi)
	return axis{lo: 0, hi: top, pxLo: plotBottom, pxHi: plotTop}, ticks
}

func (c svgChart) extent(get func(model.Point) float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points() {
			lo, hi = min(lo, get(p)), max(hi, get(p))
		}
	}
	if math.IsInf(lo, 0) {
		return 0, 1
	}
	return lo, hi
}

// maxTicks bounds the number of intervals between y (or linear x) ticks.
const maxTicks = 7

// niceTicks returns an axis top and ticks 0, step, ... with the smallest
// step of 1, 2 or 5 times a power of ten that needs at most maxTicks steps.
func niceTicks(hi float64) (float64, []float64) {
	if hi <= 0 || math.IsNaN(hi) || math.IsInf(hi, 0) {
		hi = 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(hi/maxTicks)))
	step := mag * 10
	for _, m := range []float64{1, 2, 5} {
		if math.Ceil(hi/(m*mag)-1e-9) <= maxTicks {
			step = m * mag
			break
		}
	}
	n := int(math.Ceil(hi/step - 1e-9))
	var ticks []float64
	for i := 0; i <= n; i++ {
		ticks = append(ticks, float64(i)*step)
	}
	return float64(n) * step, ticks
}

func writeGrid(b *bufio.Writer, x axis, xticks []float64, y axis, yticks []float64, log2 bool) {
	fmt.Fprintf(b, "<g class=\"grid\" stroke=\"#dddddd\" stroke-width=\"1\">\n")
	for _, t := range yticks {
		fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\"/>\n", plotLeft, f1(y.px(t)), plotRight, f1(y.px(t)))
	}
	for _, t := range xticks {
		fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\"/>\n", f1(x.px(t)), plotTop, f1(x.px(t)), plotBottom)
	}
	fmt.Fprintf(b, "</g>\n<g class=\"axes\" fill=\"#222222\">\n")
	fmt.Fprintf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888888\"/>\n",
		plotLeft, plotTop, plotRight-plotLeft, plotBottom-plotTop)
	for _, t := range yticks {
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%s\" text-anchor=\"end\">%s</text>\n", plotLeft-8, f1(y.px(t)+4.5), tickLabel(t, slices.Max(yticks)))
	}
	last := math.Inf(-1)
	for _, t := range xticks {
		px := x.px(t)
		if px-last < minTickGap {
			continue // the labels would overlap; the grid line stays
		}
		last = px
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", f1(px), plotBottom+20, tickLabel(t, slices.Max(xticks)))
	}
	fmt.Fprintf(b, "</g>\n")
}

// tickLabel renders a tick value without float noise and short enough to
// stay clear of the axis title; top (the axis' largest tick) picks one unit
// for the whole axis: "2.5", "5,000", "5k" when top >= 10k, "0.5M" when
// top >= 1M. Zero is always "0".
func tickLabel(v, top float64) string {
	switch a := math.Abs(top); {
	case v == 0:
		return "0"
	case a >= 1e6:
		return plain(v/1e6) + "M"
	case a >= 1e4:
		return plain(v/1e3) + "k"
	case math.Abs(v) >= 1000:
		return steps.Thousands(int64(math.Round(v)))
	}
	return plain(v)
}

func plain(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

func writeSeries(b *bufio.Writer, s model.Series, x, y axis) {
	fmt.Fprintf(b, "<g class=\"series\" data-series=\"%s\">\n", esc(s.Name))
	var d strings.Builder
	for _, seg := range s.Segments {
		for i, p := range seg {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%s %s ", cmd, f1(x.px(p.X)), f1(y.px(p.Y)))
		}
	}
	fmt.Fprintf(b, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\" stroke-linejoin=\"round\"%s/>\n",
		strings.TrimSpace(d.String()), seriesColor(s.Style), dashAttr(s.Style))
	for _, p := range s.Points() {
		writeMarker(b, s.Style, x.px(p.X), y.px(p.Y), p.Hollow)
	}
	fmt.Fprintf(b, "</g>\n")
}

// writeMarker draws the style's marker shape: circle, square, diamond,
// triangle, in turn.
func writeMarker(b *bufio.Writer, style int, cx, cy float64, hollow bool) {
	color := seriesColor(style)
	fill := color
	if hollow {
		fill = "#ffffff"
	}
	paint := fmt.Sprintf("fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"", fill, color)
	switch style % 4 {
	case 0:
		fmt.Fprintf(b, "<circle cx=\"%s\" cy=\"%s\" r=\"4.5\" %s/>\n", f1(cx), f1(cy), paint)
	case 1:
		fmt.Fprintf(b, "<rect x=\"%s\" y=\"%s\" width=\"8\" height=\"8\" %s/>\n", f1(cx-4), f1(cy-4), paint)
	case 2:
		fmt.Fprintf(b, "<polygon points=\"%s,%s %s,%s %s,%s %s,%s\" %s/>\n",
			f1(cx), f1(cy-5.5), f1(cx+5.5), f1(cy), f1(cx), f1(cy+5.5), f1(cx-5.5), f1(cy), paint)
	default:
		fmt.Fprintf(b, "<polygon points=\"%s,%s %s,%s %s,%s\" %s/>\n",
			f1(cx), f1(cy-5.5), f1(cx+5), f1(cy+4), f1(cx-5), f1(cy+4), paint)
	}
}

func (c svgChart) writeLegend(b *bufio.Writer) {
	fmt.Fprintf(b, "<g class=\"legend\" fill=\"#222222\">\n")
	for i, s := range c.Series {
		cy := float64(plotTop + 12 + i*legendRow)
		fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\" stroke=\"%s\" stroke-width=\"2.5\"%s/>\n",
			legendX, f1(cy), legendX+30, f1(cy), seriesColor(s.Style), dashAttr(s.Style))
		writeMarker(b, s.Style, float64(legendX+15), cy, false)
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%s\">%s</text>\n", legendX+40, f1(cy+4.5), esc(cut(s.Name, legendChars)))
	}
	fmt.Fprintf(b, "</g>\n")
}

// cut shortens s to n runes, marking the cut with an ellipsis.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func f1(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// esc escapes text and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}
