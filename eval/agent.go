package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// systemPrompt comes before the server's instructions in every run: the
// same words in both modes, so that only the tools differ.
const systemPrompt = `You are an agent with tools. Use them to answer the user's question. When you have the answer, reply with it in plain text without calling a tool; say how sure you are when the evidence is incomplete.`

// RunResult is the outcome of one run of one scenario in one mode.
type RunResult struct {
	Scenario string `json:"scenario"`
	Mode     Mode   `json:"mode"`
	Run      int    `json:"run"`
	// Outcome is correct, uncertain or wrong (see Outcome).
	Outcome Outcome `json:"outcome"`
	// Why says what was wrong when Outcome is wrong.
	Why string `json:"why,omitempty"`
	// Answer is the model's final answer ("" when it gave none).
	Answer string `json:"answer"`
	// GaveUp is "turn limit" or "token limit" when the run ended there.
	GaveUp       string `json:"gave_up,omitempty"`
	Turns        int    `json:"turns"`
	ToolCalls    int    `json:"tool_calls"`
	SourceRuns   int    `json:"source_runs"`
	ReRuns       int    `json:"reruns"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	WallMS       int64  `json:"wall_ms"`
	// Transcript is the whole conversation (written by --out, not to the
	// report).
	Transcript []Message `json:"-"`
}

// Correct reports whether the run's outcome is correct.
func (r RunResult) Correct() bool { return r.Outcome == Correct }

// Limits bound one run.
type Limits struct {
	// Turns is the most model turns; 0 = 24.
	Turns int
	// Tokens is the most input plus output tokens; 0 = 2,000,000.
	Tokens int64
	// ToolTimeout bounds one tool call; 0 = 2 minutes.
	ToolTimeout time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.Turns <= 0 {
		l.Turns = 24
	}
	if l.Tokens <= 0 {
		l.Tokens = 2_000_000
	}
	if l.ToolTimeout <= 0 {
		l.ToolTimeout = 2 * time.Minute
	}
	return l
}

// runOne runs sc once in mode against m. Its error is a failure of the
// endpoint or of the harness, never of the model's answer.
func runOne(ctx context.Context, m Model, sc *Scenario, mode Mode, n int, lim Limits) (RunResult, error) {
	lim = lim.withDefaults()
	start := time.Now()
	res := RunResult{Scenario: sc.Name, Mode: mode, Run: n}
	w, err := newWorld(ctx, sc, mode)
	if err != nil {
		return res, fmt.Errorf("setting up scenario %s: %w", sc.Name, err)
	}
	defer w.close()

	system := systemPrompt
	if in := w.instructions(); in != "" {
		system += "\n\n" + in
	}
	history := []Message{{Role: "user", Text: w.expand(sc.Question)}}
	searched := false // a full copy was read or searched
	answered := false
	for res.Turns < lim.Turns {
		if res.InputTokens+res.OutputTokens >= lim.Tokens {
			res.GaveUp = "token limit"
			break
		}
		reply, err := m.Next(ctx, system, w.tools, history)
		if err != nil {
			res.Transcript = history
			return res, err
		}
		res.Turns++
		res.InputTokens += reply.InputTokens
		res.OutputTokens += reply.OutputTokens
		history = append(history, Message{Role: "assistant", Text: reply.Text, ToolCalls: reply.ToolCalls})
		if len(reply.ToolCalls) == 0 {
			res.Answer = strings.TrimSpace(reply.Text)
			answered = true
			break
		}
		for _, c := range reply.ToolCalls {
			res.ToolCalls++
			text, isErr := w.call(ctx, c, lim.ToolTimeout)
			if searchedCopy(c, isErr) {
				searched = true
			}
			history = append(history, Message{Role: "tool", ToolCallID: c.ID, Text: text, IsError: isErr})
		}
	}
	if !answered && res.GaveUp == "" {
		res.GaveUp = "turn limit"
	}
	res.Transcript = history
	res.WallMS = time.Since(start).Milliseconds()

	runs, reruns := w.runs()
	res.SourceRuns, res.ReRuns = runs, reruns
	res.Outcome, res.Why = judge(sc, mode, verdict{answered: answered, gaveUp: res.GaveUp,
		reruns: reruns, answer: res.Answer, searched: searched})
	return res, nil
}

// call makes one tool call through the MCP client session and returns the
// text the model reads. Arguments that are not a JSON object, and a tool
// that does not exist, are tool errors the model reads, as real agents
// report them.
func (w *world) call(ctx context.Context, c ToolCall, timeout time.Duration) (string, bool) {
	cs := w.route[c.Name]
	if cs == nil {
		var names []string
		for _, t := range w.tools {
			names = append(names, t.Name)
		}
		return fmt.Sprintf("Error: there is no tool named %q; the tools are %s.", c.Name, strings.Join(names, ", ")), true
	}
	args := strings.TrimSpace(c.Args)
	if args == "" {
		args = "{}"
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(args), &obj); err != nil {
		return fmt.Sprintf("Error: the arguments of %s are not a JSON object (%v); send them as one, e.g. {\"name\": value}.", c.Name, err), true
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.Name, Arguments: obj})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Sprintf("Error: %s did not answer within %s.", c.Name, timeout), true
		}
		return "Error: " + err.Error(), true
	}
	var parts []string
	for _, ct := range res.Content {
		switch ct := ct.(type) {
		case *mcp.TextContent:
			parts = append(parts, ct.Text)
		default:
			b, _ := json.Marshal(ct)
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if res.IsError {
		return "Error: " + text, true
	}
	return text, false
}
