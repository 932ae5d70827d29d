package cli

import (
	"bufio"
	"context"
	"fmt"

	"github.com/scrollback-dev/scrollback/present"
)

func init() {
	register(commandInfo{name: "cat", order: 60,
		usage:   "cat [--session ID] OUTPUT_ID",
		summary: "write a whole retained copy to stdout, raw",
		examples: []example{
			{"save a whole retained copy to a file", "scrollback cat out_alvhvxtb4mjeowolp7r7ar5afq > build.log"},
		},
		make: func(io IO) command { return &catCmd{base: base{io: io, onlyReads: true}} }})
}

// catCmd is `scrollback cat`: a whole retained copy, raw, for people and
// pipes.
type catCmd struct{ base }

func (c *catCmd) Run(ctx context.Context, args []string) error {
	c.flags("cat", true, false)
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
	w := bufio.NewWriterSize(c.io.Stdout, 64<<10)
	info, err := sess.Cat(ctx, pos[0], w)
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if !info.Complete {
		// The bytes are the copy as it is; stderr says they are not the
		// whole output, as read's last page does.
		fmt.Fprintf(c.io.Stderr, "scrollback cat: %s, %s\n", present.Incomplete, present.MayExist)
	}
	return nil
}
