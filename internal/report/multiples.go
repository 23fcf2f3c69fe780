package report

import (
	"bufio"
	"fmt"
	"io"
	"math"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/steps"
)

// Multiples' geometry, px.
const (
	mulWidth   = 900
	mulCols    = 2
	mulTop     = 64  // below the titles
	mulPanelW  = 430 // a panel's width
	mulLabelW  = 96  // its bar labels' column
	mulValueW  = 120 // its value labels' column, right of the bars
	mulBarH    = 16  // a bar's height
	mulRow     = 22  // a bar's row
	mulHead    = 30  // a panel's title row
	mulFoot    = 26  // its axis ticks
	mulGapY    = 14  // between panels
	mulMinLogs = 1.0 // the fewest decades a panel's axis spans
)

// WriteMultiples renders m as a self-contained SVG document, as WriteSVG does.
func WriteMultiples(w io.Writer, m model.Multiples) error {
	rows := (len(m.Panels) + mulCols - 1) / mulCols
	heights := make([]int, rows)
	for i, p := range m.Panels {
		heights[i/mulCols] = max(heights[i/mulCols], mulHead+len(p.Bars)*mulRow+mulFoot)
	}
	height := mulTop + 24
	for _, h := range heights {
		height += h + mulGapY
	}
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\" role=\"img\">\n",
		mulWidth, height, mulWidth, height)
	fmt.Fprintf(b, "<title>%s</title>\n", esc(m.Title))
	fmt.Fprintf(b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", mulWidth, height)
	fmt.Fprintf(b, "<text x=\"16\" y=\"26\" font-size=\"18\" font-weight=\"bold\" fill=\"#222222\">%s</text>\n", esc(m.Title))
	fmt.Fprintf(b, "<text x=\"16\" y=\"46\" font-size=\"12\" fill=\"#555555\">%s</text>\n", esc(m.Subtitle))
	y := mulTop
	for r := range rows {
		for c := range mulCols {
			if i := r*mulCols + c; i < len(m.Panels) {
				writePanel(b, m.Panels[i], 16+c*(mulPanelW+12), y)
			}
		}
		y += heights[r] + mulGapY
	}
	fmt.Fprintf(b, "<text x=\"16\" y=\"%d\" fill=\"#555555\">%s</text>\n", height-10, esc(m.XLabel))
	fmt.Fprintf(b, "</svg>\n")
	return b.Flush()
}

// writePanel draws panel p with its top left corner at x, y.
func writePanel(b *bufio.Writer, p model.Panel, x, y int) {
	fmt.Fprintf(b, "<g class=\"panel\" data-panel=\"%s\">\n", esc(p.Title))
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\" fill=\"#222222\">%s</text>\n", x, y+18, esc(p.Title))
	left, right := float64(x+mulLabelW), float64(x+mulPanelW-mulValueW)
	top := y + mulHead
	if len(p.Bars) == 0 {
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%d\" fill=\"#888888\">N/A: no product has a capacity</text>\n</g>\n", f1(left), top+14)
		return
	}
	lo, hi := panelDecades(p.Bars)
	px := func(v float64) float64 { return left + (math.Log10(v)-lo)/(hi-lo)*(right-left) }
	bottom := top + len(p.Bars)*mulRow
	for d := math.Ceil(lo); d <= hi; d++ {
		tx := px(math.Pow(10, d))
		fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\" stroke=\"#dddddd\"/>\n", f1(tx), top-4, f1(tx), bottom)
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%d\" text-anchor=\"middle\" fill=\"#555555\" font-size=\"11\">%s</text>\n", f1(tx), bottom+14, steps.FormatQPS(math.Pow(10, d)))
	}
	for i, bar := range p.Bars {
		cy := float64(top + i*mulRow + mulRow/2)
		color := seriesColor(bar.Style)
		if bar.Muted {
			color = "#aaaaaa"
		}
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"end\" fill=\"#222222\">%s</text>\n", f1(left-6), f1(cy+4), esc(cut(bar.Label, 14)))
		fmt.Fprintf(b, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%d\" fill=\"%s\"/>\n", f1(left), f1(cy-mulBarH/2), f1(max(px(bar.Value)-left, 1)), mulBarH, color)
		if bar.Lo > 0 && bar.Hi > 0 {
			l, h := px(bar.Lo), px(bar.Hi)
			fmt.Fprintf(b, "<path d=\"M%s %s H%s M%s %s V%s M%s %s V%s\" stroke=\"#222222\" stroke-width=\"1.5\" fill=\"none\"/>\n",
				f1(l), f1(cy), f1(h), f1(l), f1(cy-5), f1(cy+5), f1(h), f1(cy-5), f1(cy+5))
		}
		label := steps.FormatQPS(bar.Value)
		if bar.Note != "" {
			label += " " + bar.Note
		}
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" fill=\"#222222\" font-size=\"11\">%s</text>\n", f1(right+6), f1(cy+4), esc(label))
	}
	fmt.Fprintf(b, "</g>\n")
}

// panelDecades is a panel's axis: log10 of its smallest whisker or bar
// over 1.5 to log10 of its largest times 1.5, at least mulMinLogs wide.
func panelDecades(bars []model.Bar) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, b := range bars {
		for _, v := range []float64{b.Value, b.Lo, b.Hi} {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	lo, hi = math.Log10(lo/1.5), math.Log10(hi*1.5)
	if hi-lo < mulMinLogs {
		mid := (hi + lo) / 2
		lo, hi = mid-mulMinLogs/2, mid+mulMinLogs/2
	}
	return lo, hi
}
