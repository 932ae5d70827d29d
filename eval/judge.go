package eval

import (
	"encoding/json"
	"fmt"
	"regexp"
)

// Outcome is how a run ended.
type Outcome string

// The outcomes.
const (
	// Correct: the true answer, whatever route found it.
	Correct Outcome = "correct"
	// Uncertain: the answer says it cannot tell, in a mode where the
	// scenario's evidence really cannot be had without running a source
	// again. Where it could be had, saying so is wrong.
	Uncertain Outcome = "uncertain"
	// Wrong: a false value, a false absence, an absence claimed without
	// having searched a full copy, a source run again, or no answer.
	Wrong Outcome = "wrong"
)

// verdict is what the judge needs to know of a run.
type verdict struct {
	answered bool
	gaveUp   string
	reruns   int
	answer   string
	searched bool // a full copy was read or searched before the answer
}

// judge scores one run of sc in mode. The rules judge what the answer
// claims, not the route to it: a true value is correct in every mode; a
// claim of absence needs a full copy searched; "cannot tell" is uncertain
// where the evidence is lost in that mode, and wrong where it was there to
// be found.
func judge(sc *Scenario, mode Mode, v verdict) (Outcome, string) {
	switch {
	case !v.answered:
		return Wrong, "gave up (" + v.gaveUp + ")"
	case v.reruns > 0:
		return Wrong, fmt.Sprintf("re-ran a source %d time(s)", v.reruns)
	}
	ok, why := sc.Answer.Check(v.answer)
	if ok && sc.Truth == TruthAbsent && sc.uncertain.MatchString(v.answer) {
		ok, why = false, "it says both that the thing is absent and that it cannot tell"
	}
	if ok {
		if sc.Truth == TruthAbsent && !v.searched {
			return Wrong, "claimed an absence without having searched a full copy (a retained copy, or a file it read)"
		}
		return Correct, ""
	}
	if sc.uncertain.MatchString(v.answer) {
		if sc.LostIn(mode) {
			return Uncertain, ""
		}
		return Wrong, "said it cannot tell, but the evidence could be had in this mode without running the source again"
	}
	return Wrong, why
}

// searchPrograms are the shell programs that read or search a file.
var searchPrograms = regexp.MustCompile(`(^|[\s|;&(])(grep|egrep|fgrep|rg|ag|awk|sed|jq|cat|head|tail|less|more|wc|cut|sort|uniq|python3?|perl|find|strings|od|xxd)(\s|$)`)

// searchedCopy reports whether a tool call read or searched a full copy:
// a retained copy through scrollback's readers, a file through read_file,
// or a file or stream through a shell program that reads or searches.
func searchedCopy(c ToolCall, isErr bool) bool {
	if isErr {
		return false
	}
	switch c.Name {
	case "read_tool_output", "grep_tool_output", "query_tool_output", "read_file":
		return true
	case "run_command":
		var args struct {
			Command string `json:"command"`
		}
		json.Unmarshal([]byte(c.Args), &args)
		return searchPrograms.MatchString(args.Command)
	}
	return false
}
