package cli

import (
	"context"
	"io"

	"github.com/scrollback-dev/scrollback"
)

func init() {
	register(commandInfo{name: "read", order: 20,
		usage:   "read [--session ID] [--offset N] [--limit N] [--json] OUTPUT_ID",
		summary: "print one page of a retained copy",
		make:    func(io IO) command { return &readCmd{base: base{io: io}} }})
}

// readCmd is `scrollback read`: print one page of a retained copy.
type readCmd struct {
	base
	offset int64
	limit  int
}

func (c *readCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("read", true, true)
	fs.Int64Var(&c.offset, "offset", 0, "UTF-8 byte `N` to start at (a nextOffset)")
	fs.IntVar(&c.limit, "limit", scrollback.PageLimit, "most bytes `N` to print, 1 to 4096")
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
