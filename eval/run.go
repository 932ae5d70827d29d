package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"
)

// Config is one evaluation: which model, which scenarios, how often.
type Config struct {
	Model     Model
	Scenarios []*Scenario
	// Modes run side by side, in this order; nil = AllModes.
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
	Scenario string `json:"scenario,omitempty"`
	Title    string `json:"title,omitempty"`
	Client   Client `json:"client,omitempty"`
	Sealed   bool   `json:"sealed,omitempty"`
	Mode     Mode   `json:"mode"`
	// N is the number of runs.
	N         int `json:"n"`
	Correct   int `json:"correct"`
	Uncertain int `json:"uncertain"`
	Wrong     int `json:"wrong"`
	// ReRuns counts runs of a source that repeated an earlier one.
	ReRuns       int     `json:"reruns"`
	ToolCalls    int     `json:"tool_calls"`
	MeanCalls    float64 `json:"mean_tool_calls"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	// InputTokensPerCorrect is InputTokens over Correct: what one right
	// answer cost, wrong and uncertain runs included. null when no run was
	// correct.
	InputTokensPerCorrect *float64 `json:"input_tokens_per_correct"`
	WallMS                int64    `json:"wall_ms"`
	// In Totals, when each scenario ran more than once: 95% intervals
	// (Student's t over the passes of the suite) of the correct answers in
	// one pass, and of the input tokens per correct answer.
	CorrectCI95               *[2]float64 `json:"correct_ci95,omitempty"`
	InputTokensPerCorrectCI95 *[2]float64 `json:"input_tokens_per_correct_ci95,omitempty"`
}

func (r *Row) add(x RunResult) {
	r.N++
	switch x.Outcome {
	case Correct:
		r.Correct++
	case Uncertain:
		r.Uncertain++
	default:
		r.Wrong++
	}
	r.ReRuns += x.ReRuns
	r.ToolCalls += x.ToolCalls
	r.InputTokens += x.InputTokens
	r.OutputTokens += x.OutputTokens
	r.WallMS += x.WallMS
}

func (r *Row) finish() {
	if r.N > 0 {
		r.MeanCalls = float64(r.ToolCalls) / float64(r.N)
	}
	if r.Correct > 0 {
		v := float64(r.InputTokens) / float64(r.Correct)
		r.InputTokensPerCorrect = &v
	}
}

// Run runs every scenario of cfg in every mode, Runs times each. Its error
// is a failure of the endpoint or of the harness: then no report is made,
// since a report of a broken run would claim results it did not measure.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Model == nil {
		return nil, fmt.Errorf("eval: no model")
	}
	if len(cfg.Modes) == 0 {
		cfg.Modes = AllModes
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
	rep.summarize(cfg.Scenarios, cfg.Modes, cfg.Runs)
	return rep, nil
}

func outcome(r RunResult) string {
	verdict := string(r.Outcome)
	if r.Why != "" {
		verdict += ": " + r.Why
	}
	return fmt.Sprintf("%s (%d tool calls, %d re-runs, %d tokens, %.1f s)",
		verdict, r.ToolCalls, r.ReRuns, r.InputTokens+r.OutputTokens, float64(r.WallMS)/1000)
}

func (rep *Report) summarize(scs []*Scenario, modes []Mode, runs int) {
	for _, sc := range scs {
		for _, m := range modes {
			row := Row{Scenario: sc.Name, Title: sc.Title, Client: sc.Client, Sealed: sc.Sealed, Mode: m}
			for _, r := range rep.Runs {
				if r.Scenario == sc.Name && r.Mode == m {
					row.add(r)
				}
			}
			row.finish()
			rep.Rows = append(rep.Rows, row)
		}
	}
	for _, m := range modes {
		t := Row{Mode: m}
		// One pass of the suite per run number: its correct answers and
		// its input tokens per correct answer.
		correct := make([]float64, runs)
		input := make([]float64, runs)
		for _, r := range rep.Runs {
			if r.Mode != m {
				continue
			}
			t.add(r)
			if r.Outcome == Correct {
				correct[r.Run-1]++
			}
			input[r.Run-1] += float64(r.InputTokens)
		}
		t.finish()
		if runs > 1 {
			lo, hi := interval95(correct)
			t.CorrectCI95 = &[2]float64{max(lo, 0), min(hi, float64(len(scs)))}
			var per []float64
			for i := range runs {
				if correct[i] > 0 {
					per = append(per, input[i]/correct[i])
				}
			}
			if len(per) > 1 {
				lo, hi := interval95(per)
				t.InputTokensPerCorrectCI95 = &[2]float64{max(lo, 0), hi}
			}
		}
		rep.Totals = append(rep.Totals, t)
	}
}

// interval95 is the 95% interval of the mean of xs, by Student's t.
func interval95(xs []float64) (lo, hi float64) {
	n := float64(len(xs))
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / n
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	half := tQuantile975(len(xs)-1) * math.Sqrt(ss/(n-1)) / math.Sqrt(n)
	return mean - half, mean + half
}

// tQuantile975 is the 97.5th percentile of Student's t with df degrees of
// freedom.
func tQuantile975(df int) float64 {
	table := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	switch {
	case df < 1:
		return math.Inf(1)
	case df <= len(table):
		return table[df-1]
	case df <= 60:
		return 2.000
	case df <= 120:
		return 1.980
	}
	return 1.960
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
