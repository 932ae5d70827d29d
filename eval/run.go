package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Config is one evaluation: which model, which scenarios, how often.
type Config struct {
	Model     Model
	Scenarios []*Scenario
	// Modes run side by side, in this order; nil = both.
	Modes []Mode
	// Runs is how often each scenario runs in each mode; 0 = 1.
	Runs   int
	Limits Limits
	// Progress receives one line per run as it ends; nil = none.
	Progress io.Writer
	// OutDir, when set, receives each run's transcript as JSON Lines.
	OutDir string
}

// Report is what an evaluation measured.
type Report struct {
	Model    string      `json:"model"`
	Date     string      `json:"date"`
	Settings Settings    `json:"settings"`
	Rows     []Row       `json:"rows"`
	Totals   []Row       `json:"totals"`
	Runs     []RunResult `json:"runs"`
}

// Settings are the evaluation's settings, kept with its figures.
type Settings struct {
	Runs   int    `json:"runs"`
	Modes  []Mode `json:"modes"`
	Turns  int    `json:"max_turns"`
	Tokens int64  `json:"max_tokens"`
}

// Row sums the runs of one scenario in one mode (or, in Totals, of every
// scenario in one mode).
type Row struct {
	Scenario     string  `json:"scenario,omitempty"`
	Title        string  `json:"title,omitempty"`
	Mode         Mode    `json:"mode"`
	N            int     `json:"n"`
	Correct      int     `json:"correct"`
	MeanCalls    float64 `json:"mean_tool_calls"`
	ReRuns       int     `json:"reruns"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	WallMS       int64   `json:"wall_ms"`
}

// Run runs every scenario of cfg in every mode, Runs times each. Its error
// is a failure of the endpoint or of the harness: then no report is made,
// since a report of a broken run would claim results it did not measure.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Model == nil {
		return nil, fmt.Errorf("eval: no model")
	}
	if len(cfg.Modes) == 0 {
		cfg.Modes = []Mode{ModeScrollback, ModeTruncate}
	}
	cfg.Runs = max(cfg.Runs, 1)
	lim := cfg.Limits.withDefaults()
	rep := &Report{
		Model:    cfg.Model.Name(),
		Date:     time.Now().UTC().Format(time.RFC3339),
		Settings: Settings{Runs: cfg.Runs, Modes: cfg.Modes, Turns: lim.Turns, Tokens: lim.Tokens},
	}
	if cfg.OutDir != "" {
		if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
			return nil, err
		}
	}
	total := len(cfg.Scenarios) * len(cfg.Modes) * cfg.Runs
	done := 0
	for _, sc := range cfg.Scenarios {
		for _, mode := range cfg.Modes {
			for n := 1; n <= cfg.Runs; n++ {
				r, err := runOne(ctx, cfg.Model, sc, mode, n, lim)
				if err != nil {
					return nil, err
				}
				done++
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "[%*d/%d] %s %s run %d: %s\n", len(fmt.Sprint(total)), done, total, sc.Name, mode, n, outcome(r))
				}
				if cfg.OutDir != "" {
					if err := writeTranscript(cfg.OutDir, r); err != nil {
						return nil, err
					}
				}
				rep.Runs = append(rep.Runs, r)
			}
		}
	}
	rep.summarize(cfg.Scenarios, cfg.Modes)
	return rep, nil
}

func outcome(r RunResult) string {
	verdict := "correct"
	if !r.Correct {
		verdict = "wrong: " + r.Why
	}
	return fmt.Sprintf("%s (%d tool calls, %d re-runs, %d tokens, %.1f s)",
		verdict, r.ToolCalls, r.ReRuns, r.InputTokens+r.OutputTokens, float64(r.WallMS)/1000)
}

func (rep *Report) summarize(scs []*Scenario, modes []Mode) {
	totals := map[Mode]*Row{}
	totalCalls := map[Mode]int{}
	for _, m := range modes {
		totals[m] = &Row{Mode: m}
	}
	for _, sc := range scs {
		for _, m := range modes {
			row := Row{Scenario: sc.Name, Title: sc.Title, Mode: m}
			calls := 0
			for _, r := range rep.Runs {
				if r.Scenario != sc.Name || r.Mode != m {
					continue
				}
				row.N++
				if r.Correct {
					row.Correct++
				}
				calls += r.ToolCalls
				row.ReRuns += r.ReRuns
				row.InputTokens += r.InputTokens
				row.OutputTokens += r.OutputTokens
				row.WallMS += r.WallMS
			}
			if row.N > 0 {
				row.MeanCalls = float64(calls) / float64(row.N)
			}
			rep.Rows = append(rep.Rows, row)
			t := totals[m]
			totalCalls[m] += calls
			t.N += row.N
			t.Correct += row.Correct
			t.ReRuns += row.ReRuns
			t.InputTokens += row.InputTokens
			t.OutputTokens += row.OutputTokens
			t.WallMS += row.WallMS
		}
	}
	for _, m := range modes {
		t := totals[m]
		if t.N > 0 {
			t.MeanCalls = float64(totalCalls[m]) / float64(t.N)
		}
		rep.Totals = append(rep.Totals, *t)
	}
}

// writeTranscript writes one run's conversation to DIR/SCENARIO-MODE-N.jsonl:
// one message a line, then the run's result.
func writeTranscript(dir string, r RunResult) error {
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%s-%d.jsonl", r.Scenario, r.Mode, r.Run)))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, m := range r.Transcript {
		if err := enc.Encode(m); err != nil {
			f.Close()
			return err
		}
	}
	if err := enc.Encode(map[string]any{"result": r}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
