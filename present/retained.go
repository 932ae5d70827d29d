package present

import (
	"encoding/json"
	"strings"
)

// What a copy made during a Code Mode run holds (Ref.Holds).
const (
	// HoldsOutput: the tool's own copy of its whole output (a command's
	// output_id).
	HoldsOutput = "output"
	// HoldsResult: the result the script received, saved by the bridge
	// because it was over the preview budget (for a command, the JSON
	// object wrapping its preview; its whole output is its own copy).
	HoldsResult = "result"
	// HoldsLogs: the script's console output, saved because it was over
	// the preview budget; the result's logs is its preview. No tool call
	// made it: its Ref's Call is 0 and its Tool is run_code.
	HoldsLogs = "logs"
)

// Ref is the recovery reference of a copy made during a Code Mode run (by
// the bridge, or by a nested tool itself), labelled with what it holds. In
// JSON it is the contract's {call, tool, output_id, totalBytes, complete}
// plus the labels holds and command.
type Ref struct {
	Call       int    `json:"call"` // 1-based index of the tool call that produced it; 0 for the console output (HoldsLogs)
	Tool       string `json:"tool"`
	OutputID   string `json:"output_id"` // empty only when the save failed
	TotalBytes int64  `json:"totalBytes"`
	Complete   bool   `json:"complete"`
	// Holds says what the copy holds: HoldsOutput, HoldsResult or
	// HoldsLogs.
	Holds string `json:"holds"`
	// Command is the command the call ran, when its arguments name one
	// (run_command), cut short.
	Command string `json:"command,omitempty"`
	// RecoveryError says why the bridge could not save the result.
	RecoveryError string `json:"recovery_error,omitempty"`
}

// CommandOf returns the command a call's arguments name (a top-level string
// "command"), cut to a label's length; "" when they name none.
func CommandOf(args json.RawMessage) string {
	var a struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	return OneLine(a.Command, CommandLabelMax)
}

// CommandLabelMax bounds the command a label repeats.
const CommandLabelMax = 120

// Retained lists the copies a run made, one a line, each with what it
// holds, so that a model can tell a command's whole output from the result
// object that wraps its preview. "" when there are none.
func Retained(s Surface, refs []Ref) string {
	if len(refs) == 0 {
		return ""
	}
	var b strings.Builder
	if s.IsCLI() {
		for _, r := range refs {
			b.WriteString("retained: " + refLabel(r, refs))
			if r.OutputID != "" {
				b.WriteString("; read it with: " + s.Read(r.OutputID, 0))
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	b.WriteString("[scrollback: copies made during the run; read them with " + ReadTool + ", search them with " + GrepTool + ":\n")
	for _, r := range refs {
		b.WriteString("  " + refLabel(r, refs) + "\n")
	}
	b.WriteString("]")
	return b.String()
}

// refLabel says which copy r is and what it holds.
func refLabel(r Ref, all []Ref) string {
	var b strings.Builder
	if r.OutputID != "" {
		b.WriteString(r.OutputID + ": ")
	}
	if r.Holds != HoldsLogs {
		b.WriteString("call " + itoa(int64(r.Call)) + " " + r.Tool)
		if r.Command != "" {
			b.WriteString(" `" + r.Command + "`")
		}
		b.WriteString(": ")
	}
	switch r.Holds {
	case HoldsLogs:
		b.WriteString("the script's console output (logs)")
	case HoldsOutput:
		b.WriteString("its whole output")
	default:
		b.WriteString("the result the script received")
		for _, o := range all {
			if o.Call == r.Call && o.Holds == HoldsOutput && o.OutputID != "" {
				b.WriteString("; the whole output is " + o.OutputID)
				break
			}
		}
	}
	if r.OutputID == "" {
		return b.String() + ", not saved: " + r.RecoveryError
	}
	state := "complete"
	if !r.Complete {
		state = "incomplete (complete=false)"
	}
	return b.String() + ", " + itoa(r.TotalBytes) + " bytes, " + state
}
