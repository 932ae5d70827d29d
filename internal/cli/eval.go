package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/scrollback-dev/scrollback/eval"
)

func init() {
	register(commandInfo{name: "eval", order: 90,
		usage:   "eval --base-url URL --model NAME [--provider openai|anthropic] [--api-key-env VAR] [--scenario NAME,...] [--mode both|scrollback|truncate] [--runs N] [--json] [--out DIR] [--html FILE] | --list",
		summary: "measure whether a model answers right through scrollback, beside a plain 24 KiB cut",
		about: `Runs the scenario suite (see --list, and docs/eval.md) against a model endpoint in two
modes side by side: scrollback (the tools as scrollback mcp lists them) and truncate (the
baseline: a 24 KiB cut, no id, no reader). Prints a progress line per run on stderr and a
Markdown table on stdout: per scenario and mode, correct runs out of N, tool calls, re-runs
of the source, tokens and wall time. An endpoint that cannot be reached or refuses the key
ends it with one line and exit status 2, with no report.`,
		examples: []example{
			{"a local model served by ollama", "scrollback eval --base-url http://localhost:11434/v1 --model qwen2.5:14b"},
			{"a hosted model, five runs each, with transcripts and a page to share",
				"scrollback eval --base-url https://api.openai.com/v1 --model gpt-x --api-key-env OPENAI_API_KEY --runs 5 --json --out results/ --html results/report.html"},
			{"one scenario through Anthropic's Messages API", "scrollback eval --provider anthropic --model claude-x --scenario trailing-field --mode scrollback --runs 3"},
		},
		make: func(io IO) command { return &evalCmd{base: base{io: io}} }})
}

// evalCmd is `scrollback eval`: the scenario suite against a model.
type evalCmd struct {
	base
	baseURL, model, provider, apiKeyEnv string
	scenarios, mode, out, html          string
	runs, turns                         int
	tokens, maxOutput                   int64
	list                                bool
	timeout                             time.Duration
}

func (c *evalCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("eval", false, true)
	fs.StringVar(&c.baseURL, "base-url", "", "the model endpoint's base `URL`, e.g. http://localhost:11434/v1 (default: none for openai, Anthropic's API for anthropic)")
	fs.StringVar(&c.model, "model", "", "the model `NAME` the endpoint knows (default: none; needed)")
	fs.StringVar(&c.provider, "provider", "openai", "the endpoint's protocol, `NAME`: openai (Chat Completions: OpenAI, ollama, vLLM, llama.cpp, LM Studio, OpenRouter) or anthropic (Messages) (default openai)")
	fs.StringVar(&c.apiKeyEnv, "api-key-env", "", "read the API key from environment variable `VAR` (default OPENAI_API_KEY or ANTHROPIC_API_KEY, by provider; local servers need none)")
	fs.StringVar(&c.scenarios, "scenario", "", "run only these scenarios, comma-separated `NAMES` (see --list; default all)")
	fs.StringVar(&c.mode, "mode", "both", "which `MODE` to run: scrollback, truncate (the baseline) or both, side by side (default both)")
	fs.IntVar(&c.runs, "runs", 1, "run each scenario `N` times in each mode (default 1)")
	fs.IntVar(&c.turns, "max-turns", 24, "end a run that has not answered after `N` model turns; it counts as failed (default 24)")
	fs.Int64Var(&c.tokens, "max-tokens", 2_000_000, "end a run after `N` input plus output tokens; it counts as failed (default 2000000)")
	fs.Int64Var(&c.maxOutput, "max-output-tokens", 4096, "the most tokens, `N`, the model may write in one turn (default 4096)")
	fs.DurationVar(&c.timeout, "timeout", 0, "stop the whole evaluation after `DURATION`, e.g. 30m (default none)")
	fs.StringVar(&c.out, "out", "", "keep each run's full transcript as JSON Lines in `DIR` (default: not kept)")
	fs.StringVar(&c.html, "html", "", "also write a self-contained report page with a chart to `FILE` (default: none)")
	fs.BoolVar(&c.list, "list", false, "list the scenarios, one line each, and exit (default false)")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("eval takes no arguments, got %q", pos)
	}
	all, err := eval.Scenarios()
	if err != nil {
		return err
	}
	if c.list {
		for _, sc := range all {
			fmt.Fprintf(c.io.Stdout, "%-18s %s\n", sc.Name, sc.Title)
		}
		return nil
	}
	var names []string
	if c.scenarios != "" {
		names = strings.Split(c.scenarios, ",")
	}
	scs, err := eval.Select(all, names)
	if err != nil {
		return usageError{err.Error()}
	}
	var modes []eval.Mode
	switch c.mode {
	case "both":
		modes = []eval.Mode{eval.ModeScrollback, eval.ModeTruncate}
	case "scrollback", "truncate":
		modes = []eval.Mode{eval.Mode(c.mode)}
	default:
		return usagef("--mode %q: want both, scrollback or truncate", c.mode)
	}
	if c.runs < 1 || c.turns < 1 || c.tokens < 1 {
		return usagef("--runs, --max-turns and --max-tokens must be at least 1")
	}
	if c.model == "" {
		return usagef("give the model with --model NAME (and its endpoint with --base-url URL)")
	}
	keyEnv := c.apiKeyEnv
	var m eval.Model
	switch c.provider {
	case "openai":
		if c.baseURL == "" {
			return usagef("give the endpoint with --base-url URL, e.g. http://localhost:11434/v1 for ollama")
		}
		if keyEnv == "" {
			keyEnv = "OPENAI_API_KEY"
		}
		om := eval.NewOpenAI(c.baseURL, c.io.Getenv(keyEnv), c.model)
		om.MaxTokens = c.maxOutput
		m = om
	case "anthropic":
		if keyEnv == "" {
			keyEnv = "ANTHROPIC_API_KEY"
		}
		am := eval.NewAnthropic(c.baseURL, c.io.Getenv(keyEnv), c.model)
		am.MaxTokens = c.maxOutput
		m = am
	default:
		return usagef("--provider %q: want openai or anthropic", c.provider)
	}
	if c.apiKeyEnv != "" && c.io.Getenv(c.apiKeyEnv) == "" {
		return usagef("--api-key-env %s: that environment variable is not set", c.apiKeyEnv)
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	rep, err := eval.Run(ctx, eval.Config{Model: m, Scenarios: scs, Modes: modes, Runs: c.runs,
		Limits: eval.Limits{Turns: c.turns, Tokens: c.tokens}, Progress: c.io.Stderr, OutDir: c.out})
	if err != nil {
		// No partial report: a report of a broken run would claim results
		// it did not measure.
		if eval.IsEndpointError(err) {
			return usageError{err.Error() + "; no report was written"}
		}
		return err
	}
	if c.html != "" {
		f, err := os.Create(c.html)
		if err != nil {
			return err
		}
		if err := rep.WriteHTML(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if c.json {
		enc := json.NewEncoder(c.io.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	}
	return rep.WriteMarkdown(c.io.Stdout)
}
