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
		examples: []example{
			{"find the failures in a retained copy, with 2 lines of context", "scrollback grep -C 2 out_alvhvxtb4mjeowolp7r7ar5afq 'FAIL|panic:'"},
			{"find an error message in either case", "scrollback grep -i out_alvhvxtb4mjeowolp7r7ar5afq 'error'"},
			{"count the lines that are exactly ERROR", "scrollback grep --count out_alvhvxtb4mjeowolp7r7ar5afq '^ERROR$'"},
		},
		make: func(io IO) command { return &grepCmd{base: base{io: io}} }})
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
	pos, err := c.parse(args)
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
	if c.json {
		return printJSON(c.io.Stdout, res)
	}
	if c.count {
		// Like grep -c: the number, and status 1 when it is 0.
		fmt.Fprintln(c.io.Stdout, res.Count)
		if _, end := present.Count(present.CLI(c.session), int64(res.Count), c.offset, res.TotalBytes, res.Complete); end != "" {
			fmt.Fprintf(c.io.Stderr, "scrollback grep: %s\n", end)
		}
		if res.Count == 0 {
			return exitError{1}
		}
		return nil
	}
	// Like grep -n: "LINE:" before a match, "LINE-" before context, "--"
	// between groups that are not adjacent; each line also gives its byte
	// offset, for `scrollback read --offset`.
	w := bufio.NewWriter(c.io.Stdout)
	var last int64 // the last line printed
	printLine := func(line, off int64, sep, text string, truncated bool) {
		if line <= last {
			return
		}
		if last > 0 && line > last+1 && c.context > 0 {
			fmt.Fprintln(w, "--")
		}
		var b strings.Builder
		present.MatchLine(&b, present.CLI(c.session), present.Match{Line: line, Offset: off, Text: text, Context: sep == "-", Truncated: truncated})
		w.WriteString(b.String())
		last = line
	}
	for _, m := range res.Matches {
		for _, b := range m.Before {
			printLine(b.Line, b.Offset, "-", b.Text, b.Truncated)
		}
		printLine(m.Line, m.Offset, ":", m.Text, m.Truncated)
		for _, a := range m.After {
			printLine(a.Line, a.Offset, "-", a.Text, a.Truncated)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	switch {
	case len(res.Matches) == 0 && !res.HasMore:
		fmt.Fprintf(c.io.Stderr, "scrollback grep: %s\n", present.GrepNone(pos[0], c.offset, res.Complete))
		return exitError{1}
	default:
		if end := present.GrepEnd(present.CLI(c.session), len(res.Matches), c.offset, res.NextOffset, res.TotalBytes, res.HasMore, res.Complete); end != "" {
			fmt.Fprintf(c.io.Stderr, "scrollback grep: %s\n", end)
		}
	}
	return nil
}
