package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/model"
)

const goldenCharts = "testdata/charts"

// TestGoldenCharts renders run1's charts and compares them with the golden
// SVGs (rerun with -update after looking at them in a browser).
func TestGoldenCharts(t *testing.T) {
	in, _ := loadRun1(t)
	r := model.Build(in, model.Options{})
	var names []string
	for _, cf := range r.Charts {
		names = append(names, cf.Name)
	}
	// Efficiency charts only where a steady cell has CPU figures.
	want := []string{"qps-discovery.svg", "p99-discovery.svg", "efficiency-discovery.svg",
		"qps-client_credentials.svg", "p99-client_credentials.svg", "efficiency-client_credentials.svg",
		"qps-client_credentials_login.svg", "p99-client_credentials_login.svg",
		"qps-introspect.svg", "p99-introspect.svg", "qps-auth_code.svg", "p99-auth_code.svg",
		"qps-refresh.svg", "p99-refresh.svg", "efficiency-refresh.svg",
		"qps-userinfo.svg", "p99-userinfo.svg", "efficiency-userinfo.svg", model.GCJitterChart}
	if !slices.Equal(names, want) {
		t.Errorf("charts %q, want %q", names, want)
	}
	if len(r.ChartsNA) != 1 || !strings.Contains(r.ChartsNA[0], "jwt_bearer") {
		t.Errorf("charts not drawn %q, want jwt_bearer", r.ChartsNA)
	}
	if *update {
		if err := WriteCharts(goldenCharts, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, cf := range r.Charts {
		got, err := RenderChart(cf)
		if err != nil {
			t.Fatal(err)
		}
		wantB, err := os.ReadFile(filepath.Join(goldenCharts, cf.Name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(wantB) {
			t.Errorf("%s differs from the golden file (rerun with -update after checking):\n%s", cf.Name, firstDiff(string(got), string(wantB)))
		}
	}
}

// svgDoc is what the well-formedness test collects from a chart.
type svgDoc struct {
	root                  xml.StartElement
	title                 string
	texts                 []string
	axisLabels            int
	seriesPaths           map[string]int // data-series -> <path> elements in its group
	legendTexts           []string
	hasWhiteBackground    bool
	scripts, externalRefs int
}

// decodeSVG walks the document with encoding/xml: a malformed document is an error.
func decodeSVG(t *testing.T, b []byte) svgDoc {
	t.Helper()
	d := svgDoc{seriesPaths: map[string]int{}}
	dec := xml.NewDecoder(bytes.NewReader(b))
	var stack []xml.StartElement
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			d.start(el, stack)
			stack = append(stack, el)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			d.text(string(el), stack)
		}
	}
	if len(stack) != 0 {
		t.Fatalf("%d unclosed elements", len(stack))
	}
	return d
}

func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// group returns the class and data-series of the innermost <g> on the stack.
func group(stack []xml.StartElement) (class, series string) {
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i].Name.Local == "g" {
			return attr(stack[i], "class"), attr(stack[i], "data-series")
		}
	}
	return "", ""
}

func (d *svgDoc) start(el xml.StartElement, stack []xml.StartElement) {
	switch el.Name.Local {
	case "svg":
		if len(stack) == 0 {
			d.root = el
		}
	case "script", "foreignObject", "image", "style":
		d.scripts++
	case "rect":
		if len(stack) == 1 && attr(el, "fill") == "#ffffff" && attr(el, "width") == attr(d.root, "width") {
			d.hasWhiteBackground = true
		}
	case "path":
		if class, series := group(stack); class == "series" {
			d.seriesPaths[series]++
		}
	case "text":
		if attr(el, "class") == "axis-label" {
			d.axisLabels++
		}
	}
	for _, a := range el.Attr {
		if a.Name.Local == "href" || strings.Contains(a.Value, "url(http") {
			d.externalRefs++
		}
	}
}

func (d *svgDoc) text(s string, stack []xml.StartElement) {
	if len(stack) == 0 || strings.TrimSpace(s) == "" {
		return
	}
	switch stack[len(stack)-1].Name.Local {
	case "title":
		d.title = s
	case "text":
		d.texts = append(d.texts, s)
		if class, _ := group(stack); class == "legend" {
			d.legendTexts = append(d.legendTexts, s)
		}
	}
}

func TestChartsAreWellFormed(t *testing.T) {
	in, _ := loadRun1(t)
	r := model.Build(in, model.Options{})
	for _, cf := range r.Charts {
		t.Run(cf.Name, func(t *testing.T) {
			b, err := RenderChart(cf)
			if err != nil {
				t.Fatal(err)
			}
			d := decodeSVG(t, b)
			for _, a := range []string{"width", "height", "viewBox"} {
				if attr(d.root, a) == "" {
					t.Errorf("<svg> lacks %s", a)
				}
			}
			if d.title != cf.Chart.Title || !slices.Contains(d.texts, cf.Chart.Title) {
				t.Errorf("<title> %q / visible title missing; want %q", d.title, cf.Chart.Title)
			}
			if d.axisLabels != 2 || !slices.Contains(d.texts, cf.Chart.XLabel) || !slices.Contains(d.texts, cf.Chart.YLabel) {
				t.Errorf("axis labels %d (%q, %q)", d.axisLabels, cf.Chart.XLabel, cf.Chart.YLabel)
			}
			if !strings.Contains(cf.Chart.XLabel, "(") || !strings.Contains(cf.Chart.YLabel, "(") {
				t.Errorf("axis labels without units: %q, %q", cf.Chart.XLabel, cf.Chart.YLabel)
			}
			if !d.hasWhiteBackground || d.scripts != 0 || d.externalRefs != 0 {
				t.Errorf("background %v, scripts %d, external references %d", d.hasWhiteBackground, d.scripts, d.externalRefs)
			}
			var names []string
			for _, s := range cf.Chart.Series {
				names = append(names, s.Name)
				if d.seriesPaths[s.Name] != 1 {
					t.Errorf("series %s has %d <path> elements, want 1", s.Name, d.seriesPaths[s.Name])
				}
			}
			if len(d.seriesPaths) != len(names) || !slices.Equal(d.legendTexts, names) {
				t.Errorf("series groups %v, legend %q; want one per product %q", d.seriesPaths, d.legendTexts, names)
			}
		})
	}
}

func TestLadderChartTicksAreTheConnectionCounts(t *testing.T) {
	in, _ := loadRun1(t)
	r := model.Build(in, model.Options{})
	cf := r.Charts[0] // qps-discovery: hydra 2..16, keycloak 2, 4
	if !cf.Chart.XLog2 || !slices.Equal(cf.Chart.XTicks, []float64{2, 4, 8, 16}) {
		t.Errorf("x ticks %v (log2 %v), want 2 4 8 16 on a log2 axis", cf.Chart.XTicks, cf.Chart.XLog2)
	}
	b, _ := RenderChart(cf)
	for _, tick := range []string{">2</text>", ">16</text>", ">14k</text>"} {
		if !bytes.Contains(b, []byte(tick)) {
			t.Errorf("no tick label %s", tick)
		}
	}
	hydra := cf.Chart.Series[0].Points()
	if len(hydra) != 4 || !hydra[3].Hollow || hydra[2].Hollow {
		t.Errorf("hydra points %+v; want 4 with only the driver-limited c=16 hollow", hydra)
	}
}

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		hi   float64
		top  float64
		n    int
		step float64
	}{
		{13100, 14000, 8, 2000}, {2.51, 3, 7, 0.5}, {184, 200, 5, 50}, {1, 1, 6, 0.2}, {0, 1, 6, 0.2}, {7, 7, 8, 1},
	}
	for _, tc := range tests {
		top, ticks := niceTicks(tc.hi)
		if top != tc.top || len(ticks) != tc.n || ticks[1]-ticks[0] != tc.step || ticks[0] != 0 {
			t.Errorf("niceTicks(%v) = %v, %v; want top %v, %d ticks, step %v", tc.hi, top, ticks, tc.top, tc.n, tc.step)
		}
	}
}

func TestTickLabel(t *testing.T) {
	tests := []struct {
		v, top float64
		want   string
	}{
		{0, 1, "0"}, {0.2, 1, "0.2"}, {0.30000000000000004, 1, "0.3"}, {2.5, 3, "2.5"}, {5000, 8000, "5,000"},
		{5000, 20000, "5k"}, {14000, 14000, "14k"}, {0, 20000, "0"}, {500000, 1.5e6, "0.5M"}, {1.2e6, 1.2e6, "1.2M"},
	}
	for _, tc := range tests {
		if got := tickLabel(tc.v, tc.top); got != tc.want {
			t.Errorf("tickLabel(%v, top %v) = %q, want %q", tc.v, tc.top, got, tc.want)
		}
	}
}

func TestSVGEscapesNames(t *testing.T) {
	c := model.Chart{Title: `a <b> & "c"`, XLabel: "x (s)", YLabel: "y (ms)",
		Series: []model.Series{{Name: "p<&>", Segments: [][]model.Point{{{X: 1, Y: 2}}}}}}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, c); err != nil {
		t.Fatal(err)
	}
	d := decodeSVG(t, buf.Bytes())
	if d.title != c.Title || d.seriesPaths["p<&>"] != 1 {
		t.Errorf("title %q, series %v", d.title, d.seriesPaths)
	}
}
