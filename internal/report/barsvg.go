package report

import (
	"bufio"
	"fmt"
	"slices"
	"strings"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/steps"
)

// barShare is the part of a group's width its bars take.
const barShare = 0.7

// writeBars draws a grouped bar chart (Chart.Bars) after the head: a y grid
// from zero, the group labels, one <path> of bars per series with each
// bar's value above it, and a legend of swatches.
func (c svgChart) writeBars(b *bufio.Writer) {
	y, yticks := c.yAxis()
	fmt.Fprintf(b, "<g class=\"grid\" stroke=\"#dddddd\" stroke-width=\"1\">\n")
	for _, t := range yticks {
		fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\"/>\n", plotLeft, f1(y.px(t)), plotRight, f1(y.px(t)))
	}
	fmt.Fprintf(b, "</g>\n<g class=\"axes\" fill=\"#222222\">\n")
	fmt.Fprintf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888888\"/>\n",
		plotLeft, plotTop, plotRight-plotLeft, plotBottom-plotTop)
	for _, t := range yticks {
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%s\" text-anchor=\"end\">%s</text>\n", plotLeft-8, f1(y.px(t)+4.5), tickLabel(t, slices.Max(yticks)))
	}
	for i, g := range c.Groups {
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", f1(c.groupMid(i)), plotBottom+20, esc(cut(g, legendChars)))
	}
	fmt.Fprintf(b, "</g>\n")
	c.writeAxisLabels(b)
	for k, s := range c.Series {
		c.writeBarSeries(b, k, s, y)
	}
	c.writeNoBars(b, y)
	c.writeBarLegend(b)
}

// groupMid is the x pixel of group i's middle.
func (c svgChart) groupMid(i int) float64 {
	w := float64(plotRight-plotLeft) / float64(max(len(c.Groups), 1))
	return plotLeft + w*(float64(i)+0.5)
}

// barX is the left edge and width of series k's bar in group i.
func (c svgChart) barX(i, k int) (float64, float64) {
	gw := float64(plotRight-plotLeft) / float64(max(len(c.Groups), 1))
	bw := gw * barShare / float64(max(len(c.Series), 1))
	return c.groupMid(i) - gw*barShare/2 + float64(k)*bw, bw
}

func (c svgChart) writeBarSeries(b *bufio.Writer, k int, s model.Series, y axis) {
	fmt.Fprintf(b, "<g class=\"series\" data-series=\"%s\">\n", esc(s.Name))
	var d strings.Builder
	var labels []string
	for _, p := range s.Points() {
		x, w := c.barX(int(p.X), k)
		top, base := y.px(p.Y), y.px(0)
		fmt.Fprintf(&d, "M%s %s H%s V%s H%s Z ", f1(x), f1(base), f1(x+w), f1(top), f1(x))
		labels = append(labels, fmt.Sprintf("<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" font-size=\"11\" fill=\"#222222\">%s</text>\n",
			f1(x+w/2), f1(top-4), esc(steps.FormatQPS(p.Y))))
	}
	fmt.Fprintf(b, "<path d=\"%s\" fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"1\"/>\n", strings.TrimSpace(d.String()), seriesColor(s.Style))
	for _, l := range labels {
		b.WriteString(l)
	}
	fmt.Fprintf(b, "</g>\n")
}

func (c svgChart) writeBarLegend(b *bufio.Writer) {
	fmt.Fprintf(b, "<g class=\"legend\" fill=\"#222222\">\n")
	for i, s := range c.Series {
		cy := float64(plotTop + 12 + i*legendRow)
		fmt.Fprintf(b, "<rect x=\"%d\" y=\"%s\" width=\"30\" height=\"12\" fill=\"%s\"/>\n", legendX, f1(cy-6), seriesColor(s.Style))
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%s\">%s</text>\n", legendX+40, f1(cy+4.5), esc(cut(s.Name, legendChars)))
	}
	fmt.Fprintf(b, "</g>\n")
}

// writeNoBars marks a group without any bar "N/A" on the baseline.
func (c svgChart) writeNoBars(b *bufio.Writer, y axis) {
	has := map[int]bool{}
	for _, s := range c.Series {
		for _, p := range s.Points() {
			has[int(p.X)] = true
		}
	}
	for i := range c.Groups {
		if !has[i] {
			fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" fill=\"#888888\">N/A</text>\n", f1(c.groupMid(i)), f1(y.px(0)-6))
		}
	}
}
