package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/present"
)

func init() {
	register(commandInfo{name: "query", order: 26,
		usage:   "query [--session ID] [--offset N] [--limit N] [--json] OUTPUT_ID FILTER",
		summary: "run a jq filter over a retained copy that holds JSON (one document or JSON Lines)",
		examples: []example{
			{"print one field of a large JSON result", "scrollback query out_alvhvxtb4mjeowolp7r7ar5afq '.summary'"},
			{"pick records out of JSON Lines", `scrollback query out_alvhvxtb4mjeowolp7r7ar5afq 'select(.level == "error") | .msg'`},
			{"page through many results, 4096 bytes at a time", "scrollback query --limit 4096 --offset 0 out_alvhvxtb4mjeowolp7r7ar5afq '.items[].id'"},
		},
		make: func(io IO) command { return &queryCmd{base: base{io: io, onlyReads: true}} }})
}

// queryCmd is `scrollback query`: jq over a retained copy.
type queryCmd struct {
	base
	offset int64
	limit  int
}

func (c *queryCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("query", true, true)
	fs.Int64Var(&c.offset, "offset", 0, "print one page of results from byte `N` of the results, a nextOffset (default 0; without --offset, --limit or --json every result is printed)")
	fs.IntVar(&c.limit, "limit", scrollback.PageLimit, fmt.Sprintf("print one page of at most `N` bytes of results, 1 to %d (default %d)", scrollback.PageLimit, scrollback.PageLimit))
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want OUTPUT_ID and FILTER, got %d arguments", len(pos))
	}
	if err := checkPageFlags(c.offset, c.limit); err != nil {
		return err
	}
	paged := c.json
	fs.Visit(func(f *flag.Flag) { paged = paged || f.Name == "offset" || f.Name == "limit" })
	// The filter runs in a worker process (a light one: Pool.Query), under
	// the operating system's limits, as the servers run it: a filter that
	// blows up memory in one step is the memory-limit error, not this
	// process killed.
	c.codeWorkers = codemode.NewPool(codemode.PoolOptions{Logger: warnLogger(c.io.Stderr)})
	defer c.codeWorkers.Close()
	sess, st, err := c.useSession(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	in := scrollback.QueryInput{ID: pos[0], Filter: pos[1], Offset: c.offset, Limit: &c.limit}
	res, err := sess.QueryToolOutput(ctx, in)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(c.io.Stdout, res)
	}
	if _, err := io.WriteString(c.io.Stdout, res.Text); err != nil {
		return err
	}
	// Without --offset or --limit, print every result, as jq would: the
	// results are computed once and kept, so each page is a slice of them.
	for !paged && res.HasMore {
		in.Offset = res.NextOffset
		if res, err = sess.QueryToolOutput(ctx, in); err != nil {
			return err
		}
		if _, err := io.WriteString(c.io.Stdout, res.Text); err != nil {
			return err
		}
	}
	end := present.QueryEnd(present.CLI(c.session), in.ID, in.Filter, in.Offset, res.NextOffset, res.TotalBytes, res.HasMore, res.Complete, res.Note)
	for _, line := range strings.Split(end, "\n") {
		if line != "" {
			fmt.Fprintf(c.io.Stderr, "scrollback query: %s\n", line)
		}
	}
	return nil
}
