package present

import (
	"strconv"
	"strings"
)

// The texts of tool results that are not a preview: what follows a page,
// a file page, a search, a count, a query, a command and a script. Each is
// the bracketed line (or lines) a result's text ends with, telling where
// the text stops and what comes next; over MCP it is the result's second
// text block.

// Placeholders for a result with no text of its own.
const (
	NoOutput  = "(the command wrote no output)"
	NoMatches = "(no matching lines)"
	NoResults = "(the filter produced no results)"
	NoValue   = "(the script returned nothing)"
)

// PageEnd is the line after a page of read_tool_output that read id from
// offset to next, of a copy of total bytes.
func PageEnd(s Surface, id string, offset, next, total int64, hasMore, complete bool) string {
	switch {
	case hasMore:
		return "[scrollback: bytes " + itoa(offset) + " to " + itoa(next) + " of " + itoa(total) + ". More follows: " + s.Read(id, next) + "]"
	case complete:
		return "[scrollback: end of the retained copy (" + itoa(total) + " bytes); " + Complete + "]"
	}
	return "[scrollback: end of the retained copy (" + itoa(total) + " bytes), but " + Incomplete + ", " + MayExist + "]"
}

// FileEnd is the line after a page of read_file: lines first to last of a
// file of total bytes, continuing at next when hasMore. midLine says that
// the page ends inside line last (a line longer than a page), which then
// goes on at next: the page's end is not the line's.
func FileEnd(s Surface, path string, first, last, total, next int64, hasMore, midLine bool) string {
	if hasMore {
		goesOn := ""
		if midLine {
			goesOn = "; line " + itoa(last) + " goes on past byte " + itoa(next)
		}
		return "[scrollback: lines " + itoa(first) + " to " + itoa(last) + " of a " + itoa(total) + "-byte file" + goesOn + ". More follows: " + s.File(path, next) + "]"
	}
	return "[scrollback: end of the file (" + itoa(total) + " bytes)]"
}

// Match is one line of a search's text: a match (context false) or a
// context line around one.
type Match struct {
	Line, Offset int64
	Text         string
	Context      bool
	Truncated    bool
}

// MatchLine writes one line of a search's text: "LINE:OFFSET: text" for a
// match, "LINE-OFFSET- text" for a context line, as grep -n writes them
// with the byte offset added (at a terminal with no space before the text,
// as grep does); a line whose text is not the whole line says so.
func MatchLine(b *strings.Builder, s Surface, m Match) {
	sep := ":"
	if m.Context {
		sep = "-"
	}
	b.WriteString(itoa(m.Line) + sep + itoa(m.Offset) + sep)
	if !s.IsCLI() {
		b.WriteByte(' ')
	}
	b.WriteString(m.Text)
	if m.Truncated {
		b.WriteString(" [part of a longer line: read on from its offset]")
	}
	b.WriteByte('\n')
}

// GrepEnd is the line after a search's matches: n matches shown, more from
// next when hasMore, else whether the search saw everything. offset is
// where the search started: from past 0 it did not see the copy's start,
// and never says it searched the whole copy.
func GrepEnd(s Surface, n int, offset, next, total int64, hasMore, complete bool) string {
	searched := span("searched the whole", "searched from", offset, total)
	switch {
	case hasMore && s.IsCLI():
		return "more matches follow: continue with --offset " + itoa(next)
	case hasMore:
		return "[scrollback: " + strconv.Itoa(n) + " matches shown (line:offset: text). More may follow: call " + GrepTool + ` with the same pattern and "offset": ` + itoa(next) + "]"
	case !complete && s.IsCLI():
		return Incomplete + ", " + MayExist
	case !complete:
		return "[scrollback: " + searched + ", but " + Incomplete + ", " + MayExist + "]"
	case s.IsCLI():
		return ""
	}
	return "[scrollback: " + searched + "; " + Complete + "]"
}

// GrepNone is the CLI's message for a search of id from offset that
// matched no line.
func GrepNone(id string, offset int64, complete bool) string {
	none := "no line of " + id + " matches"
	if offset > 0 {
		none = "no line of " + id + " from offset " + itoa(offset) + " on matches"
	}
	if complete {
		return none
	}
	return none + "; " + Incomplete + ", " + MayExist
}

// Count says how many lines matched (from offset, when not 0), then, on a
// line of its own, whether the count covers everything the tool produced.
func Count(s Surface, count, offset, total int64, complete bool) (text, end string) {
	text = itoa(count) + " lines match"
	if count == 1 {
		text = "1 line matches"
	}
	if offset > 0 {
		text += " from offset " + itoa(offset)
	}
	counted := span("counted over the whole", "counted from", offset, total)
	switch {
	case !complete && s.IsCLI():
		end = Incomplete + ", " + MayBeMore
	case !complete:
		end = "[scrollback: " + counted + ", but " + Incomplete + ", " + MayBeMore + "]"
	case !s.IsCLI():
		end = "[scrollback: " + counted + "; " + Complete + "]"
	}
	return text, end
}

// span says what part of a copy of total bytes a search or count from
// offset went through: "<whole> retained copy (T bytes)" from 0, else
// "<from> offset N to the end of the retained copy (T bytes)", so that
// one started past 0 never claims the lines before it.
func span(whole, from string, offset, total int64) string {
	if offset > 0 {
		return from + " offset " + itoa(offset) + " to the end of the retained copy (" + itoa(total) + " bytes)"
	}
	return whole + " retained copy (" + itoa(total) + " bytes)"
}

// QueryEnd is the line after a page of a query's results: from offset to
// next of total bytes of results; note is the engine's note on a copy whose
// parsing stopped, "" for none.
func QueryEnd(s Surface, id, filter string, offset, next, total int64, hasMore, complete bool, note string) string {
	var end string
	switch {
	case hasMore && s.IsCLI():
		end = "more results follow; continue with --offset " + itoa(next)
	case hasMore:
		end = "[scrollback: bytes " + itoa(offset) + " to " + itoa(next) + " of " + itoa(total) + " bytes of results. More follows: " + s.QueryPage(id, filter, next) + "]"
	case note != "":
	case !complete && s.IsCLI():
		end = Incomplete + ", " + MayExist
	case !complete:
		end = "[scrollback: end of the results (" + itoa(total) + " bytes), but " + Incomplete + ", " + MayExist + "]"
	case !s.IsCLI():
		end = "[scrollback: end of the results (" + itoa(total) + " bytes); the copy " + strings.TrimPrefix(Complete, "it ") + "]"
	}
	if note == "" {
		return end
	}
	if s.IsCLI() {
		return strings.TrimPrefix(end+"\n", "\n") + note
	}
	return strings.TrimPrefix(end+"\n", "\n") + "[scrollback: " + note + "]"
}

// QueryStopped is the engine's note on an incomplete copy whose parsing
// stopped: where, why, and what the results cover.
func QueryStopped(at int64, why string, documents int64) string {
	return "the copy is incomplete and stops parsing at byte " + itoa(at) + " (" + why + "): the results cover the " +
		Plural(documents, "whole document") + " before it, " + MayExist
}

// QueryGap is the engine's note on a stream of documents (JSON Lines)
// whose middle a cap dropped at byte at: the results cover the documents
// before the gap and those after it, from byte resumed on; skipped bytes
// between the marker and resumed, the rest of a line the cut may have
// begun inside, were passed over.
func QueryGap(at int64, m Marker, before, after int64, resumed, skipped int64) string {
	s := "the copy is incomplete: at byte " + itoa(at) + " the " + m.Cap + " cap dropped " + Plural(m.Bytes, "byte") + " (" + GapLines(m.Lines) +
		"); the results cover the " + Plural(before, "whole document") + " before that and the " + Plural(after, "whole document") + " from byte " + itoa(resumed) + " on"
	if skipped > 0 {
		s += " (the " + Plural(skipped, "byte") + " before, the rest of a line the cut may have begun inside, were passed over)"
	}
	return s + ", " + MayExist
}

// CommandEnd is the line after the output of a command that was shown
// whole and did not exit 0: how it ended. "" for a zero exit.
func CommandEnd(timedOut bool, durationMS int64, signal string, exitCode *int) string {
	switch {
	case timedOut:
		return "[scrollback: the command timed out after " + itoa(durationMS) + " ms and its process group was killed; above is what it wrote before]"
	case signal != "":
		return "[scrollback: the command was killed by signal " + signal + "]"
	case exitCode != nil && *exitCode != 0:
		return "[scrollback: the command exited with status " + strconv.Itoa(*exitCode) + "]"
	}
	return ""
}

// OutputHeldOpen says why a command's output, shown whole, is
// incomplete: reading stopped while a process the command started outside
// its process group (setsid, a daemon) still held the output open. Over
// MCP it is the line after the output, in brackets; at a terminal, on
// stderr.
const OutputHeldOpen = "the output above is incomplete (complete=false): a process the command started outside its process group still held the output open when reading stopped, and anything it wrote after that is not here; say what is not in it is uncertain, not absent"

// Unsaved is the line after a result whose copy could not be saved:
// recoveryError says why (NotSaved).
func Unsaved(recoveryError string) string { return "[scrollback: " + recoveryError + "]" }

// Stopped is the line after a command the server stopped because it was
// shutting down.
const Stopped = "[scrollback: the server is shutting down and stopped this command (its process group was killed); above is what it wrote before. Run it again once the server is back.]"

// ScriptError is the line after a script's value when the script stopped
// with an error; errJSON is the error as JSON ({kind, message, line,
// column}).
func ScriptError(errJSON string) string {
	return "[scrollback: the script stopped with an error: " + errJSON + "]"
}

// Console heads a script's console output.
func Console(logs string) string { return "console:\n" + logs }

// ConsoleCut ends console output cut at max bytes, dropped calls of
// console.log not kept in full.
func ConsoleCut(max, dropped int) string {
	return "[console output cut at " + strconv.Itoa(max) + " bytes: " + strconv.Itoa(dropped) + " console call(s) not kept in full; log less, or return what matters]\n"
}

// UnknownTool is the tool error for a call of a tool the server does not
// have: the SDK's message, then the tools there are.
func UnknownTool(msg string, tools []string) string {
	return msg + "; this server's tools are " + strings.Join(tools, ", ")
}

// SchemaHint ends the message of arguments that do not match a tool's
// input schema.
const SchemaHint = "; the arguments must match the tool's input schema (see tools/list)"
