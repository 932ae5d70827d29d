package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/present"
)

func init() {
	register(commandInfo{name: "grep", order: 25,
		usage:   "grep [--session ID] [-i] [-C N] [--max N] [--offset N] [--count] [--json] OUTPUT_ID PATTERN",
		summary: "print the lines of a retained copy that match an RE2 pattern, with line numbers and offsets",
		about: `Each line is searched to its end, however long: a match in a line over 1 KiB
prints a window of at most 1 KiB around it, from the offset given. Like grep,
the exit status is 0 when a line matched, 1 when none did (with --json too),
2 for a usage error.`,
		examples: []example{
			{"find the failures in a retained copy, with 2 lines of context", "scrollback grep -C 2 out_alvhvxtb4mjeowolp7r7ar5afq 'FAIL|panic:'"},
			{"find an error message in either case", "scrollback grep -i out_alvhvxtb4mjeowolp7r7ar5afq 'error'"},
			{"count the lines that are exactly ERROR", "scrollback grep --count out_alvhvxtb4mjeowolp7r7ar5afq '^ERROR$'"},
		},
		make: func(io IO) command { return &grepCmd{base: base{io: io, onlyReads: true}} }})
}

// grepCmd is `scrollback grep`: search a retained copy.
type grepCmd struct {
	base
	ignoreCase bool
	context    int
	max        int
	offset     int64
	count      bool
}

func (c *grepCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("grep", true, true)
	fs.BoolVar(&c.ignoreCase, "i", false, "match letters in either case (default: case matters)")
	fs.IntVar(&c.context, "C", 0, fmt.Sprintf("print `N` lines of context before and after each match, 0 to %d (default 0)", scrollback.GrepMaxContext))
	fs.IntVar(&c.max, "max", scrollback.GrepDefaultMax, fmt.Sprintf("print at most `N` matches, 1 to %d (default %d)", scrollback.GrepMaxMax, scrollback.GrepDefaultMax))
	fs.Int64Var(&c.offset, "offset", 0, "search from byte `N` of the copy, a nextOffset (default 0, the start)")
	fs.BoolVar(&c.count, "count", false, "print only how many lines match, from --offset on, like grep -c; --max and -C do not apply (default: print the lines)")
	pos, err := c.parse(attachedContext(args))
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want OUTPUT_ID and PATTERN, got %d arguments", len(pos))
	}
	switch {
	case c.max < 1 || c.max > scrollback.GrepMaxMax:
		return badFlag("max", fmt.Sprintf("a number of matches from 1 to %d", scrollback.GrepMaxMax), fmt.Sprint(scrollback.GrepDefaultMax), c.max)
	case c.context < 0 || c.context > scrollback.GrepMaxContext:
		return badFlag("C", fmt.Sprintf("a number of lines from 0 to %d", scrollback.GrepMaxContext), "2", c.context)
	}
	if err := checkOffsetFlag("offset", c.offset); err != nil {
		return err
	}
	sess, st, err := c.useSession(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	res, err := sess.GrepToolOutput(ctx, scrollback.GrepInput{ID: pos[0], Pattern: pos[1],
		IgnoreCase: c.ignoreCase, Context: c.context, Max: c.max, Offset: c.offset, Count: c.count})
	if err != nil {
		return err
	}
	// Like grep: status 1 when nothing matched (and no later match may
	// follow), with --json as without it.
	none := (c.count && res.Count == 0) || (!c.count && len(res.Matches) == 0 && !res.HasMore)
	if c.json {
		if err := printJSON(c.io.Stdout, res); err != nil {
			return err
		}
		if none {
			return exitError{1}
		}
		return nil
	}
	if c.count {
		// Like grep -c: the number, and status 1 when it is 0.
		fmt.Fprintln(c.io.Stdout, res.Count)
		if _, end := present.Count(present.CLI(c.session), int64(res.Count), c.offset, res.TotalBytes, res.Complete); end != "" {
			fmt.Fprintf(c.io.Stderr, "scrollback grep: %s\n", end)
		}
		if none {
			return exitError{1}
		}
		return nil
	}
	// Like grep -n: "LINE:" before a match, "LINE-" before context, "--"
	// between groups that are not adjacent; each line also gives its byte
	// offset, for `scrollback read --offset`. A line is printed once, in
	// line order; a line that is another match's context and a match
	// itself is printed as the match, as grep does: printed as context,
	// the match would be one the reader is told is not there.
	var lines []present.Match
	add := func(m present.Match) {
		if n := len(lines); n > 0 && m.Line <= lines[n-1].Line {
			for i := n - 1; i >= 0 && lines[i].Line >= m.Line; i-- {
				if lines[i].Line == m.Line && lines[i].Context && !m.Context {
					lines[i] = m
				}
			}
			return
		}
		lines = append(lines, m)
	}
	for _, m := range res.Matches {
		for _, b := range m.Before {
			add(present.Match{Line: b.Line, Offset: b.Offset, Text: b.Text, Context: true, Truncated: b.Truncated})
		}
		add(present.Match{Line: m.Line, Offset: m.Offset, Text: m.Text, Truncated: m.Truncated})
		for _, a := range m.After {
			add(present.Match{Line: a.Line, Offset: a.Offset, Text: a.Text, Context: true, Truncated: a.Truncated})
		}
	}
	w := bufio.NewWriter(c.io.Stdout)
	for i, l := range lines {
		if i > 0 && l.Line > lines[i-1].Line+1 && c.context > 0 {
			fmt.Fprintln(w, "--")
		}
		var b strings.Builder
		present.MatchLine(&b, present.CLI(c.session), l)
		w.WriteString(b.String())
	}
	if err := w.Flush(); err != nil {
		return err
	}
	switch {
	case none:
		fmt.Fprintf(c.io.Stderr, "scrollback grep: %s\n", present.GrepNone(pos[0], c.offset, res.Complete))
		return exitError{1}
	default:
		if end := present.GrepEnd(present.CLI(c.session), len(res.Matches), c.offset, res.NextOffset, res.TotalBytes, res.HasMore, res.Complete); end != "" {
			fmt.Fprintf(c.io.Stderr, "scrollback grep: %s\n", end)
		}
	}
	return nil
}

// attachedContext splits -C2, grep's way of writing -C 2, into the two
// arguments the flag package takes (it read -C2 as an unknown flag "C2"),
// up to a "--".
func attachedContext(args []string) []string {
	out := make([]string, 0, len(args)+1)
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if n := strings.TrimPrefix(a, "-C"); n != a && n != "" && strings.Trim(n, "0123456789") == "" {
			out = append(out, "-C", n)
			continue
		}
		out = append(out, a)
	}
	return out
}
