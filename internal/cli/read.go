package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/present"
)

func init() {
	register(commandInfo{name: "read", order: 20,
		usage:   "read [--session ID] [--offset N] [--limit N] [--json] OUTPUT_ID",
		summary: "print one page of a retained copy",
		examples: []example{
			{"print the first page of a retained copy", "scrollback read out_alvhvxtb4mjeowolp7r7ar5afq"},
			{"continue where the last page stopped (its nextOffset)", "scrollback read --offset 4096 out_alvhvxtb4mjeowolp7r7ar5afq"},
		},
		make: func(io IO) command { return &readCmd{base: base{io: io, onlyReads: true}} }})
}

// readCmd is `scrollback read`: print one page of a retained copy.
type readCmd struct {
	base
	offset int64
	limit  int
}

func (c *readCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("read", true, true)
	fs.Int64Var(&c.offset, "offset", 0, "start at byte `N` of the copy, a nextOffset (default 0, the start)")
	fs.IntVar(&c.limit, "limit", scrollback.PageLimit, fmt.Sprintf("print at most `N` bytes, 1 to 4096 (default %d)", scrollback.PageLimit))
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one OUTPUT_ID, got %d arguments", len(pos))
	}
	if err := checkPageFlags(c.offset, c.limit); err != nil {
		return err
	}
	sess, st, err := c.useSession(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	page, err := sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: pos[0], Offset: c.offset, Limit: &c.limit})
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(c.io.Stdout, page)
	}
	if _, err := io.WriteString(c.io.Stdout, page.Text); err != nil {
		return err
	}
	if page.HasMore || !page.Complete {
		endNoteLine(c.io.Stderr, "read", page.Text, present.PageEnd(present.CLI(c.session), pos[0], c.offset, page.NextOffset, page.TotalBytes, page.HasMore, page.Complete))
	}
	return nil
}

// endNoteLine writes, on stderr, the line after a page printed raw on
// stdout (present's bracketed "[scrollback: ...]" line, as "scrollback
// CMD: ..."): where the next page starts, or what the copy lacks. A page
// that does not end its last line gets a newline on stderr first, so that
// at a terminal the note stands on a line of its own while stdout keeps
// the page's bytes as they are.
func endNoteLine(stderr io.Writer, cmd, text, end string) {
	end = strings.TrimSuffix(strings.TrimPrefix(end, "[scrollback: "), "]")
	if text != "" && !strings.HasSuffix(text, "\n") {
		io.WriteString(stderr, "\n")
	}
	fmt.Fprintf(stderr, "scrollback %s: %s\n", cmd, end)
}
