package eval

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// Colours of the modes in the chart; the tests look for them in a
// screenshot.
const (
	ColorScrollback = "#1f6feb"
	ColorSpill      = "#8250df"
	ColorTruncate   = "#d29922"
)

// transcriptCut bounds each message shown in the page's transcripts, so
// that a page of many runs stays small enough to open; --out keeps them
// whole.
const transcriptCut = 4 << 10

// WriteHTML writes the report as one self-contained page: a bar chart of
// correct (and uncertain) runs per scenario, the modes side by side, as
// inline SVG; a table with a column group per mode; the totals; and each
// run's transcript a click away. It needs no network to view.
func (rep *Report) WriteHTML(w io.Writer) error {
	return pageTemplate.Execute(w, pageData{Report: rep, Chart: rep.chart(), Table: rep.sideBySide()})
}

type pageData struct {
	*Report
	Chart template.HTML
	Table []sideRow
}

// sideRow is one scenario's row of the page's table: a cell per mode.
type sideRow struct {
	Scenario, Title string
	Client          Client
	Sealed          bool
	Cells           []Row
}

func (rep *Report) sideBySide() []sideRow {
	var out []sideRow
	for _, r := range rep.Rows {
		if len(out) == 0 || out[len(out)-1].Scenario != r.Scenario {
			out = append(out, sideRow{Scenario: r.Scenario, Title: r.Title, Client: r.Client, Sealed: r.Sealed})
		}
		out[len(out)-1].Cells = append(out[len(out)-1].Cells, r)
	}
	return out
}

type chartBar struct {
	X, Y, W, H  int
	Color, Text string
	TextX       int
}

// chart draws the SVG: one group per scenario, a bar per mode whose length
// is the share of correct runs.
func (rep *Report) chart() template.HTML {
	const (
		left, barW, barH, gap, top = 230, 420, 12, 10, 40
	)
	var scenarios []string
	byKey := map[string]Row{}
	var modes []Mode
	for _, r := range rep.Rows {
		if len(scenarios) == 0 || scenarios[len(scenarios)-1] != r.Scenario {
			scenarios = append(scenarios, r.Scenario)
		}
		byKey[r.Scenario+"\x00"+string(r.Mode)] = r
	}
	for _, t := range rep.Totals {
		modes = append(modes, t.Mode)
	}
	groupH := len(modes)*barH + gap
	height := top + len(scenarios)*groupH + 20
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="correct runs per scenario">`, left+barW+80, height, left+barW+80, height)
	for i, m := range modes {
		x := left + i*130
		fmt.Fprintf(&b, `<rect x="%d" y="8" width="14" height="14" fill="%s"/><text x="%d" y="20" font-size="13" font-family="sans-serif">%s</text>`,
			x, modeColor(m), x+20, template.HTMLEscapeString(string(m)))
	}
	for i, sc := range scenarios {
		y := top + i*groupH
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" font-family="sans-serif" text-anchor="end">%s</text>`,
			left-8, y+barH+2, template.HTMLEscapeString(sc))
		for j, m := range modes {
			r := byKey[sc+"\x00"+string(m)]
			w, u := 0, 0
			if r.N > 0 {
				w = barW * r.Correct / r.N
				u = barW * r.Uncertain / r.N
			}
			by := y + j*barH
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#eee"/>`, left, by, barW, barH-2)
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s %s: %d/%d correct</title></rect>`,
				left, by, w, barH-2, modeColor(m), template.HTMLEscapeString(sc), m, r.Correct, r.N)
			if u > 0 {
				fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" fill-opacity="0.3"><title>%s %s: %d/%d uncertain</title></rect>`,
					left+w, by, u, barH-2, modeColor(m), template.HTMLEscapeString(sc), m, r.Uncertain, r.N)
			}
			fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" font-family="sans-serif">%d/%d</text>`, left+barW+6, by+barH-3, r.Correct, r.N)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every text above was escaped
}

func modeColor(m Mode) string {
	switch m {
	case ModeTruncate:
		return ColorTruncate
	case ModeSpill:
		return ColorSpill
	}
	return ColorScrollback
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"secs":  func(ms int64) string { return fmt.Sprintf("%.1f s", float64(ms)/1000) },
	"mean":  func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"per":   perCorrect,
	"color": modeColor,
	"ci": func(ci *[2]float64, prec int) string {
		if ci == nil {
			return ""
		}
		return fmt.Sprintf(" (95%%: %.*f–%.*f)", prec, ci[0], prec, ci[1])
	},
	"cut": func(s string) string {
		if len(s) <= transcriptCut {
			return s
		}
		n := utf8x.CutEnd([]byte(s), transcriptCut, false)
		return s[:n] + fmt.Sprintf("\n… (%d more bytes; --out keeps the whole transcript)", len(s)-n)
	},
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>scrollback eval: {{.Model}}</title>
<style>
body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}
td.n{text-align:right}tr.total td{font-weight:bold}
details{margin:4px 0}summary{cursor:pointer;font-size:13px}
pre{white-space:pre-wrap;word-break:break-all;background:#f6f8fa;padding:6px;font-size:12px;margin:2px 0}
.ok,.correct{color:#1a7f37}.bad,.wrong{color:#cf222e}.uncertain{color:#9a6700}.role{font-weight:bold}
.sw{display:inline-block;width:10px;height:10px;margin-right:5px}
</style></head><body>
<h1>scrollback eval: {{.Model}}</h1>
<p>{{.Date}} · {{.Settings.Runs}} run(s) per scenario and mode · at most {{.Settings.Turns}} turns and {{.Settings.Tokens}} tokens a run</p>
<h2>Correct runs per scenario</h2>
<p>Solid: correct; pale: uncertain where the evidence was lost in that mode; the rest wrong.</p>
{{.Chart}}
<h2>Totals</h2>
<table><tr><th>mode</th><th>correct</th><th>uncertain</th><th>wrong</th><th>re-runs</th><th>tool calls (mean)</th><th>input tokens</th><th>output tokens</th><th>input tokens per correct</th><th>wall time</th></tr>
{{range .Totals}}<tr class="total"><td><span class="sw" style="background:{{color .Mode}}"></span>{{.Mode}}</td><td class="n">{{.Correct}}/{{.N}}{{ci .CorrectCI95 1}}</td><td class="n">{{.Uncertain}}</td><td class="n">{{.Wrong}}</td><td class="n">{{.ReRuns}}</td><td class="n">{{mean .MeanCalls}}</td><td class="n">{{.InputTokens}}</td><td class="n">{{.OutputTokens}}</td><td class="n">{{per .InputTokensPerCorrect}}{{ci .InputTokensPerCorrectCI95 0}}</td><td class="n">{{secs .WallMS}}</td></tr>
{{end}}</table>
<h2>Per scenario, the modes side by side</h2>
<p>Each cell: correct / uncertain / wrong runs, re-runs, tool calls (mean), input tokens per correct answer.</p>
<table><tr><th>scenario</th><th>client</th>{{range .Totals}}<th>{{.Mode}}</th>{{end}}</tr>
{{range .Table}}<tr><td title="{{.Title}}">{{.Scenario}}</td><td>{{.Client}}{{if .Sealed}}, sealed{{end}}</td>{{range .Cells}}<td class="n">{{.Correct}} / {{.Uncertain}} / {{.Wrong}}{{if .ReRuns}} · <span class="bad">{{.ReRuns}} re-runs</span>{{end}} · {{mean .MeanCalls}} calls · {{per .InputTokensPerCorrect}} tok/correct</td>{{end}}</tr>
{{end}}</table>
<h2>Transcripts</h2>
{{range .Runs}}<details><summary>{{.Scenario}} · {{.Mode}} · run {{.Run}}: <span class="{{.Outcome}}">{{.Outcome}}</span>{{if .Why}} — {{.Why}}{{end}} ({{.ToolCalls}} tool calls)</summary>
{{range .Transcript}}<pre><span class="role">{{.Role}}</span>{{range .ToolCalls}}
→ {{.Name}} {{.Args}}{{end}}{{if .Text}}
{{cut .Text}}{{end}}</pre>{{end}}<pre><span class="role">final answer</span>
{{.Answer}}</pre></details>
{{end}}</body></html>
`))
