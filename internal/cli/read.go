package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/scrollback-dev/scrollback"
)

func init() {
	register(commandInfo{name: "read", order: 20,
		usage:   "read [--session ID] [--offset N] [--limit N] [--json] OUTPUT_ID",
		summary: "print one page of a retained copy",
		examples: []example{
			{"print the first page of a retained copy", "scrollback read out_alvhvxtb4mjeowolp7r7ar5afq"},
			{"continue where the last page stopped (its nextOffset)", "scrollback read --offset 4096 out_alvhvxtb4mjeowolp7r7ar5afq"},
		},
		make: func(io IO) command { return &readCmd{base: base{io: io}} }})
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
	_, err = io.WriteString(c.io.Stdout, page.Text)
	return err
}
