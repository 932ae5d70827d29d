package eval

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the report as a Markdown table: per scenario and
// mode, then the totals per mode.
func (rep *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# scrollback eval: %s\n\n", rep.Model)
	fmt.Fprintf(&b, "%s · %d run(s) per scenario and mode · at most %d turns and %d tokens a run\n\n",
		rep.Date, rep.Settings.Runs, rep.Settings.Turns, rep.Settings.Tokens)
	b.WriteString("| scenario | mode | correct | tool calls (mean) | re-runs | input tokens | output tokens | wall time |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rep.Rows {
		writeRow(&b, r.Scenario, r)
	}
	for _, r := range rep.Totals {
		writeRow(&b, "**total**", r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeRow(b *strings.Builder, name string, r Row) {
	fmt.Fprintf(b, "| %s | %s | %d/%d | %.1f | %d | %d | %d | %.1f s |\n",
		name, r.Mode, r.Correct, r.N, r.MeanCalls, r.ReRuns, r.InputTokens, r.OutputTokens, float64(r.WallMS)/1000)
}
