package eval

import (
	"fmt"
	"slices"
	"strings"
)

// Mode is how the tools behave in a run.
type Mode string

// The modes of an evaluation.
const (
	// ModeScrollback offers the tools exactly as `scrollback mcp` (and,
	// for upstream tools, `scrollback proxy`) lists them.
	ModeScrollback Mode = "scrollback"
	// ModeSpill is the best agents' baseline, as Claude Code does: a
	// result over the 24 KiB budget is written to a file, and the model
	// sees its first 2 KB and the file's path, with a shell and read_file
	// to search it.
	ModeSpill Mode = "spill"
	// ModeTruncate is what agents did before: a 24 KiB head, no id, no
	// reader.
	ModeTruncate Mode = "truncate"
)

// AllModes are the modes in the order a report shows them side by side.
var AllModes = []Mode{ModeScrollback, ModeSpill, ModeTruncate}

// ParseModes reads --mode: a comma-separated list of scrollback, spill
// and truncate; "both" is scrollback,truncate and "all" is all three. The
// modes come back in report order, each once.
func ParseModes(s string) ([]Mode, error) {
	var want []Mode
	for _, part := range strings.Split(s, ",") {
		switch p := Mode(strings.TrimSpace(part)); p {
		case "both":
			want = append(want, ModeScrollback, ModeTruncate)
		case "all":
			want = append(want, AllModes...)
		case ModeScrollback, ModeSpill, ModeTruncate:
			want = append(want, p)
		default:
			return nil, fmt.Errorf("no mode %q: want a comma-separated list of %s (or both, all)", p, modeList(AllModes))
		}
	}
	var out []Mode
	for _, m := range AllModes {
		if slices.Contains(want, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

func modeList(ms []Mode) string {
	var s []string
	for _, m := range ms {
		s = append(s, string(m))
	}
	return strings.Join(s, ", ")
}
