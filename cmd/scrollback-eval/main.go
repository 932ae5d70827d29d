// Command scrollback-eval measures whether a model answers right through
// scrollback, beside the baselines agents use without it: it runs the
// scenario suite of package eval against a model endpoint (OpenAI-compatible
// Chat Completions, or Anthropic Messages) and reports per scenario and
// mode the correct, uncertain and wrong runs, re-runs, tool calls and
// tokens.
//
// It is a binary of its own so that the model SDKs stay out of the
// scrollback binary; `scrollback eval ...` runs it when it is installed
// beside scrollback or on PATH:
//
//	go install github.com/scrollback-dev/scrollback/cmd/scrollback-eval@latest
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/eval"
	"github.com/scrollback-dev/scrollback/eval/evaltest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

const usage = `usage: scrollback-eval --base-url URL --model NAME [--provider openai|anthropic] [--api-key-env VAR] [--scenario NAME,...] [--mode scrollback,spill,truncate] [--runs N] [--json] [--out DIR] [--html FILE] | --scripted POLICY [...] | --list`

const about = `scrollback-eval runs the scenario suite (see --list, and docs/eval.md) against a model
endpoint, in up to three modes side by side: scrollback (the tools as scrollback mcp and
scrollback proxy list them), spill (the best agents' baseline: a result over 24 KiB is saved
to a file, the model sees its first 2 KB and the path, and has a shell and read_file) and
truncate (a 24 KiB head, no id, no reader). Each run is correct, uncertain (it said it cannot
tell where the evidence really was lost) or wrong. It prints a progress line per run on
stderr and a Markdown table on stdout: per scenario and mode, correct, uncertain and wrong
runs, re-runs of a source, tool calls, tokens and input tokens per correct answer. An
endpoint that cannot be reached or refuses the key ends it with one line and exit status 2,
with no report.

Examples:
  # a local model served by ollama
  scrollback-eval --base-url http://localhost:11434/v1 --model qwen2.5:14b
  # a hosted model, five runs each, with transcripts and a page to share
  scrollback-eval --base-url https://api.openai.com/v1 --model gpt-x --runs 5 --json --out results/ --html results/report.html
  # one scenario through Anthropic's Messages API, scrollback beside spill
  scrollback-eval --provider anthropic --model claude-x --scenario trailing-field --mode scrollback,spill --runs 3
  # the whole suite with the scripted diligent model: input tokens per correct answer per mode
  scrollback-eval --scripted diligent

Flags:
`

// usageError is a mistake in how scrollback-eval was called: exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// stoppedError is a run stopped by --timeout or an interrupt: exit 1, no
// report.
type stoppedError struct{ msg string }

func (e stoppedError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// run is the command line: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	err := evaluate(ctx, args, stdout, stderr, getenv)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "scrollback-eval: %s\n%s\n", ue.msg, usage)
		return 2
	case errors.As(err, new(stoppedError)):
		fmt.Fprintf(stderr, "scrollback-eval: %s; no report was written\n", err)
		return 1
	case eval.IsEndpointError(err):
		// No partial report: a report of a broken run would claim results
		// it did not measure.
		fmt.Fprintf(stderr, "scrollback-eval: %s; no report was written\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "scrollback-eval: %s\n", err)
		return 1
	}
}

func evaluate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("scrollback-eval", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	baseURL := fs.String("base-url", "", "the model endpoint's base `URL`, e.g. http://localhost:11434/v1 (default: none for openai, Anthropic's API for anthropic)")
	model := fs.String("model", "", "the model `NAME` the endpoint knows (default: none; needed)")
	provider := fs.String("provider", "openai", "the endpoint's protocol, `NAME`: openai (Chat Completions: OpenAI, ollama, vLLM, llama.cpp, LM Studio, OpenRouter) or anthropic (Messages)")
	apiKeyEnv := fs.String("api-key-env", "", "read the API key from environment variable `VAR` (default OPENAI_API_KEY or ANTHROPIC_API_KEY, by provider; local servers need none)")
	scenarios := fs.String("scenario", "", "run only these scenarios, comma-separated `NAMES` (see --list; default all)")
	modeFlag := fs.String("mode", "all", "which `MODES` to run side by side: a comma-separated list of scrollback, spill and truncate; both = scrollback,truncate; all = the three")
	runs := fs.Int("runs", 1, "run each scenario `N` times in each mode; over 1, the totals get 95% intervals")
	turns := fs.Int("max-turns", 24, "end a run that has not answered after `N` model turns; it counts as wrong")
	tokens := fs.Int64("max-tokens", 2_000_000, "end a run after `N` input plus output tokens; it counts as wrong")
	maxOutput := fs.Int64("max-output-tokens", 4096, "the most tokens, `N`, the model may write in one turn; 0 = the endpoint's default (4096 for anthropic)")
	timeout := fs.Duration("timeout", 0, "stop the whole evaluation after `DURATION`, e.g. 30m (default none)")
	out := fs.String("out", "", "keep each run's full transcript as JSON Lines in `DIR` (default: not kept)")
	html := fs.String("html", "", "also write a self-contained report page, the modes side by side, to `FILE` (default: none)")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of Markdown")
	list := fs.Bool("list", false, "list the scenarios, one line each (with --json, a JSON array of {name, title, client, sealed}), and exit")
	previewBytes := fs.Int("preview-bytes", scrollback.ShownBudget, "in scrollback mode, show at most `N` bytes (head, footer and tail) of a result too large to show whole, as scrollback mcp --preview-bytes does; compare sizes by running the suite at each")
	scripted := fs.String("scripted", "", "answer with a scripted `POLICY` instead of a model endpoint: diligent (follows what the tools say), lazy, tee (a careful shell agent) or twice; it checks the harness and what the tools cost a model that follows them")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage+"\n\n"+about)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("scrollback-eval takes no arguments, got %q", fs.Args())
	}
	all, err := eval.Scenarios()
	if err != nil {
		return err
	}
	if *list && *asJSON {
		return listJSON(stdout, all)
	}
	if *list {
		for _, sc := range all {
			kind := string(sc.Client)
			if sc.Sealed {
				kind += ", sealed"
			}
			fmt.Fprintf(stdout, "%-22s %-14s %s\n", sc.Name, kind, sc.Title)
		}
		return nil
	}
	var names []string
	if *scenarios != "" {
		for _, n := range strings.Split(*scenarios, ",") {
			names = append(names, strings.TrimSpace(n))
		}
	}
	scs, err := eval.Select(all, names)
	if err != nil {
		return usageError{err.Error()}
	}
	modes, err := eval.ParseModes(*modeFlag)
	if err != nil {
		return usagef("--mode %q: %v", *modeFlag, err)
	}
	if *previewBytes < scrollback.MinShownBytes {
		return usagef("--preview-bytes %d: give at least %d bytes, room for a head, a tail and the footer that leads to the rest", *previewBytes, scrollback.MinShownBytes)
	}
	if *previewBytes > scrollback.MaxShownBytes {
		return usagef("--preview-bytes %d: give at most %d bytes, the most scrollback mcp --preview-bytes takes", *previewBytes, scrollback.MaxShownBytes)
	}
	switch {
	case *runs < 1:
		return usagef("--runs %d: run each scenario at least once in each mode", *runs)
	case *turns < 1:
		return usagef("--max-turns %d: give a run at least 1 turn", *turns)
	case *tokens < 1:
		return usagef("--max-tokens %d: give a run at least 1 token", *tokens)
	case *maxOutput < 0:
		return usagef("--max-output-tokens %d: give at least 1, or 0 for the endpoint's default", *maxOutput)
	case *timeout < 0:
		return usagef("--timeout %s: give a duration over 0, or leave it out for none", *timeout)
	}
	if *provider != "openai" && *provider != "anthropic" {
		return usagef("--provider %q: want openai or anthropic", *provider)
	}
	if *html != "" {
		// Found now, not after the runs, with the report lost.
		if fi, err := os.Stat(filepath.Dir(*html)); err != nil || !fi.IsDir() {
			return usagef("--html %s: its directory does not exist", *html)
		}
		if fi, err := os.Stat(*html); err == nil && fi.IsDir() {
			return usagef("--html %s: that is a directory; give a file", *html)
		}
	}
	var m eval.Model
	if *scripted != "" {
		p, ok := evaltest.Policies[*scripted]
		if !ok {
			return usagef("--scripted %q: want diligent, lazy, tee or twice", *scripted)
		}
		hs := httptest.NewServer(evaltest.NewServer(p, all))
		defer hs.Close()
		// The scripted model speaks both protocols: --provider picks.
		if *provider == "anthropic" {
			m = eval.NewAnthropic(hs.URL+"/v1", "", "scripted-"+*scripted)
		} else {
			m = eval.NewOpenAI(hs.URL+"/v1", "", "scripted-"+*scripted)
		}
		*provider = "scripted"
	} else if *model == "" {
		return usagef("give the model with --model NAME (and its endpoint with --base-url URL), or --scripted POLICY")
	}
	if *baseURL != "" && *scripted == "" {
		if u, err := url.Parse(*baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usagef("--base-url %s: give an http:// or https:// URL, e.g. http://localhost:11434/v1", *baseURL)
		}
	}
	keyEnv := *apiKeyEnv
	switch *provider {
	case "scripted":
	case "openai":
		if *baseURL == "" {
			return usagef("give the endpoint with --base-url URL, e.g. http://localhost:11434/v1 for ollama")
		}
		if keyEnv == "" {
			keyEnv = "OPENAI_API_KEY"
		}
		om := eval.NewOpenAI(*baseURL, getenv(keyEnv), *model)
		om.MaxTokens = *maxOutput
		m = om
	case "anthropic":
		if keyEnv == "" {
			keyEnv = "ANTHROPIC_API_KEY"
		}
		am := eval.NewAnthropic(*baseURL, getenv(keyEnv), *model)
		am.MaxTokens = *maxOutput
		m = am
	default:
		return usagef("--provider %q: want openai or anthropic", *provider)
	}
	if *apiKeyEnv != "" && getenv(*apiKeyEnv) == "" {
		return usagef("--api-key-env %s: that environment variable is not set", *apiKeyEnv)
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	rep, err := eval.Run(ctx, eval.Config{Model: m, Scenarios: scs, Modes: modes, Runs: *runs,
		Limits: eval.Limits{Turns: *turns, Tokens: *tokens}, Progress: stderr, OutDir: *out, PreviewBytes: *previewBytes})
	if err != nil {
		// Stopped, the error is whatever the stop cut short (a session,
		// a request: "context deadline exceeded"); say what stopped it.
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded) && *timeout > 0:
			return stoppedError{fmt.Sprintf("stopped by --timeout %s before the runs ended", *timeout)}
		case ctx.Err() != nil:
			return stoppedError{"interrupted before the runs ended"}
		}
		return err
	}
	if *html != "" {
		if err := writeFile(*html, rep.WriteHTML); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	}
	return rep.WriteMarkdown(stdout)
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// listJSON prints the scenarios as a JSON array, one object a line: name,
// title, client (agent or chat) and sealed.
func listJSON(w io.Writer, all []*eval.Scenario) error {
	type entry struct {
		Name   string `json:"name"`
		Title  string `json:"title"`
		Client string `json:"client"`
		Sealed bool   `json:"sealed"`
	}
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, sc := range all {
		line, err := json.Marshal(entry{sc.Name, sc.Title, string(sc.Client), sc.Sealed})
		if err != nil {
			return err
		}
		b.WriteString("  ")
		b.Write(line)
		if i < len(all)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	_, err := w.Write(b.Bytes())
	return err
}
