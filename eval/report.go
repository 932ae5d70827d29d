package eval

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the report as Markdown: a table per scenario and
// mode, the totals per mode, and, when each scenario ran more than once,
// the 95% intervals of the totals.
func (rep *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# scrollback eval: %s\n\n", rep.Model)
	fmt.Fprintf(&b, "%s · %d run(s) per scenario and mode · modes %s · at most %d turns and %d tokens a run\n\n",
		rep.Date, rep.Settings.Runs, modeList(rep.Settings.Modes), rep.Settings.Turns, rep.Settings.Tokens)
	b.WriteString("| scenario | client | mode | correct | uncertain | wrong | re-runs | tool calls (mean) | input tokens | output tokens | input tokens per correct | wall time |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rep.Rows {
		client := string(r.Client)
		if r.Sealed {
			client += ", sealed"
		}
		writeRow(&b, r.Scenario, client, r)
	}
	for _, r := range rep.Totals {
		writeRow(&b, "**total**", "", r)
	}
	if len(rep.Totals) > 0 && rep.Totals[0].CorrectCI95 != nil {
		b.WriteString("\n95% intervals over the passes of the suite:\n\n")
		for _, t := range rep.Totals {
			fmt.Fprintf(&b, "- %s: correct answers per pass %.1f–%.1f", t.Mode, t.CorrectCI95[0], t.CorrectCI95[1])
			if ci := t.InputTokensPerCorrectCI95; ci != nil {
				fmt.Fprintf(&b, "; input tokens per correct answer %.0f–%.0f", ci[0], ci[1])
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeRow(b *strings.Builder, name, client string, r Row) {
	fmt.Fprintf(b, "| %s | %s | %s | %d/%d | %d | %d | %d | %.1f | %d | %d | %s | %.1f s |\n",
		name, client, r.Mode, r.Correct, r.N, r.Uncertain, r.Wrong, r.ReRuns, r.MeanCalls,
		r.InputTokens, r.OutputTokens, perCorrect(r.InputTokensPerCorrect), float64(r.WallMS)/1000)
}

// perCorrect formats input tokens per correct answer: "—" when no run was
// correct.
func perCorrect(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.0f", *v)
}
