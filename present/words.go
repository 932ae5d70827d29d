package present

import (
	"bytes"
	"strconv"
	"time"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// Rule is the rule of the product contract (section 4) as a preview's
// footer closes with it: a reminder at the point of use, in few words,
// since the model reads it again with every later request of the
// conversation and the instructions and tool descriptions say it in full.
const Rule = "Before saying a line, field or record is absent, search the copy and check the source's own pagination; without the evidence, say uncertain."

// Incomplete says what complete=false means; MayExist and MayBeMore say
// what follows from it for a search and for a count.
const (
	Incomplete = "the copy is incomplete (complete=false): it lacks part of what the tool produced"
	MayExist   = "so what is not found in it may still exist: say it is uncertain, not absent"
	MayBeMore  = "so the true count may be higher"
)

// Complete says that a copy holds the whole of what the tool produced.
const Complete = "it holds everything the tool produced"

// NotSaved is a result's recovery_error when its copy could not be saved.
func NotSaved(reason string) string {
	return "the retained copy could not be saved: " + reason
}

// SessionGone says that session id was deleted while in use and that no
// fresh session could be made to save into instead: a save's failure,
// which NotSaved wraps, followed by why.
func SessionGone(id string) string {
	return "session " + id + " was deleted while in use, and a fresh session to save into could not be made"
}

// Evicted says that the copy id was evicted under a storage quota at at,
// and what to do (EvictedHint): the store's message for reading such a
// copy.
func Evicted(id string, at time.Time) string {
	return "copy " + id + " was evicted under a storage quota at " + at.UTC().Format(time.RFC3339) + "; " + EvictedHint
}

// EvictedHint is what to do about an evicted copy.
const EvictedHint = "re-run its source to see that output again"

// NoCopyHint is what to do about an id that names no copy in this session,
// where the reader cannot list the copies (over MCP).
const NoCopyHint = "ids come from the output_id of a result in this same session"

// CLINoCopyHint is NoCopyHint at a terminal, where `scrollback ls` lists
// them.
const CLINoCopyHint = NoCopyHint + "; list them with `scrollback ls`"

// GapMarker is the line that stands in a copy where dropped bytes (lines of
// them) were left out because cap (stdout, stderr, copy) of limit bytes was
// crossed: the one gap marker, for a command's copy (package capture) and an
// upstream result cut by the proxy. It ends with a newline.
func GapMarker(dropped, lines int64, cap string, limit int64) string {
	return GapMarkerPrefix + Plural(dropped, "byte") + markerLines + GapLines(lines) + markerCap +
		cap + markerLimit + Plural(limit, "byte") + markerEnd + "\n"
}

// GapMarkerPrefix is how every GapMarker line begins.
const GapMarkerPrefix = "[scrollback: "

// The words of a GapMarker between its figures, which ParseGapMarker
// reads back.
const (
	markerLines = " ("
	markerCap   = ") dropped here: the "
	markerLimit = " cap of "
	markerEnd   = " was crossed]"
)

// Marker is what a GapMarker line says: how many bytes and lines of the
// output were dropped where it stands, and which cap was crossed.
type Marker struct {
	Bytes, Lines int64
	Cap          string // "copy", "stdout" or "stderr"
	Limit        int64  // that cap, in bytes
}

// ParseGapMarker reads line (without the newlines around it) as a
// GapMarker line and returns what it says, or false when line is not
// exactly one: a reader of a copy (a JSON query stopping at the gap) can
// then say the copy was cut at a cap rather than that it is malformed.
func ParseGapMarker(line []byte) (Marker, bool) {
	var m Marker
	rest, ok := bytes.CutPrefix(line, []byte(GapMarkerPrefix))
	if !ok {
		return Marker{}, false
	}
	if m.Bytes, rest, ok = parsePlural(rest, "byte", markerLines); !ok {
		return Marker{}, false
	}
	if r, within := bytes.CutPrefix(rest, []byte(withinOneLine+markerCap)); within {
		rest = r
	} else if m.Lines, rest, ok = parsePlural(rest, "line", markerCap); !ok {
		return Marker{}, false
	}
	cause, rest, ok := bytes.Cut(rest, []byte(markerLimit))
	if !ok || !(string(cause) == "copy" || string(cause) == "stdout" || string(cause) == "stderr") {
		return Marker{}, false
	}
	m.Cap = string(cause)
	if m.Limit, rest, ok = parsePlural(rest, "byte", markerEnd); !ok || len(rest) != 0 {
		return Marker{}, false
	}
	return m, true
}

// GapLines says how many lines dropped bytes span: "N lines" (the
// newlines among them), or "within one line" when they hold none, as a
// cut inside a long line (one-line JSON) does. GapMarker, a footer and
// `scrollback ls` say it so.
func GapLines(n int64) string {
	if n == 0 {
		return withinOneLine
	}
	return Plural(n, "line")
}

const withinOneLine = "within one line"

// parsePlural reads "N unit" (plural unless N is 1) followed by sep, as
// plural writes it, and returns N and what follows sep.
func parsePlural(b []byte, unit, sep string) (int64, []byte, bool) {
	num, rest, ok := bytes.Cut(b, []byte(" "))
	if !ok || len(num) == 0 || len(num) > 1 && num[0] == '0' {
		return 0, nil, false
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || n < 0 || num[0] == '+' {
		return 0, nil, false
	}
	rest, ok = bytes.CutPrefix(rest, []byte(Plural(n, unit)[len(num)+1:]+sep))
	return n, rest, ok
}

// gapSentence says, in a footer, where a copy lacks what the tool produced.
func gapSentence(g *Gap) string {
	return "The copy lacks " + Plural(g.Bytes, "byte") + " (" + GapLines(g.Lines) + ") of what the tool produced, at offset " +
		itoa(g.Offset) + " (a marker line stands there)."
}

// Gap describes bytes the tool produced that a copy does not hold: at
// offset Offset in the copy (where the GapMarker line starts), Bytes bytes
// in Lines lines were dropped. It is the one gap type: capture reports it,
// results carry it in the contract's JSON shape, footers say it.
type Gap struct {
	Offset int64 `json:"offset"` // where the marker line starts in the copy
	Bytes  int64 `json:"bytes"`  // bytes dropped at the marker
	Lines  int64 `json:"lines"`  // newlines among the dropped bytes
}

// StderrBlock frames the end of what a failed command wrote to stderr, put
// before its preview when neither the head nor the tail shows it: stderr,
// the last bytes it wrote, as it wrote them, the command having ended with
// status. The figure counts those bytes; the text shows each byte that is
// not UTF-8 as U+FFFD.
func StderrBlock(status string, stderr []byte) string {
	return "[scrollback: the command failed (" + status + "). The last " + itoa(int64(len(stderr))) +
		" bytes it wrote to stderr come first; its output follows.]\n" + utf8x.ValidString(stderr) + "\n[scrollback: end of stderr]\n"
}

// StderrBlockOverhead is the most bytes StderrBlock adds around the stderr
// it frames, besides the status: its words around an empty stderr, with
// room for the digits of a stderr of up to 1 MiB, plus 13 bytes of slack.
var StderrBlockOverhead = len(StderrBlock("", nil)) - len("0") + len("1048576") + 13

// CommandStatus says how a command ended, for a footer; "" for a zero
// exit. timeout is the limit it ran past, when it timed out.
func CommandStatus(timedOut bool, timeout time.Duration, signal string, exitCode *int) string {
	switch {
	case timedOut:
		return "timed out after " + timeout.String() + "; its process group was killed"
	case signal != "":
		return "killed by signal " + signal
	case exitCode != nil && *exitCode != 0:
		return "exit status " + strconv.Itoa(*exitCode)
	}
	return ""
}

// Plural writes n and its unit, plural unless n is 1: "1 byte", "2 bytes".
func Plural(n int64, unit string) string {
	s := itoa(n) + " " + unit
	if n != 1 {
		s += "s"
	}
	return s
}

// UpstreamCut is the footer's status for an upstream result over the copy
// cap: how much text it held, of which the copy keeps the head and the
// tail.
func UpstreamCut(original int64) string {
	return "the upstream's result held " + itoa(original) + " bytes of text; over the copy cap, the copy keeps its head and its tail"
}

// BinaryDropped stands for a binary block (an image, an audio clip, a
// resource's blob) the proxy could not carry: what it was, its MIME type,
// about how many bytes, and the limit of one message.
func BinaryDropped(what, mime string, decoded, base64, limit int64) string {
	if mime == "" {
		mime = "of no stated type"
	}
	return "[scrollback: " + what + " (" + mime + ", about " + itoa(decoded) + " bytes; " + itoa(base64) +
		" bytes of base64) was too large for the proxy to carry: one message may carry at most " + itoa(limit) +
		" bytes of base64, so it was left out. Ask the server for a smaller one.]"
}

// Why a run_command call ended before its command did: its context was
// cancelled, or its deadline passed.
const (
	CallCancelled = "the call was cancelled"
	CallDeadline  = "the call's deadline passed"
)

// CommandNotStarted is run_command's error when its call ended (why,
// CallCancelled or CallDeadline) before the command started.
func CommandNotStarted(why string) string {
	return "the command was not started: " + why
}

// CommandStopped is run_command's error when its call ended (why) while
// the command ran, stopped after ms milliseconds: where its output up to
// then is. id is its retained copy of total bytes, "" when none was made;
// saved is false when one could not be (the result's recovery_error says
// why).
func CommandStopped(why string, ms int64, id string, total int64, saved bool) string {
	s := "the command was stopped after " + itoa(ms) + " ms: " + why + "; its output up to then "
	switch {
	case !saved:
		return s + "could not be retained (see recovery_error), and the result shows what fits"
	case id != "":
		return s + "is retained as " + id + " (" + itoa(total) + " bytes)"
	}
	return s + "is in the result (" + itoa(total) + " bytes)"
}
