package cli

import (
	"context"
	"flag"
	"io"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/present"
)

func init() {
	register(commandInfo{name: "file", order: 40,
		usage:   "file [--line N] [--limit N] [--byte-offset N] [--deny PATTERN] [--json] PATH",
		summary: "print one page of a file, located by line or byte offset",
		examples: []example{
			{"print a file's first page", "scrollback file big.log"},
			{"print 100 lines from line 5000", "scrollback file --line 5000 --limit 100 big.log"},
		},
		make: func(io IO) command { return &fileCmd{base: base{io: io}} }})
}

// fileCmd is `scrollback file`: print one page of a file.
type fileCmd struct {
	base
	line, limit, byteOffset int64
	deny                    denyFlag
}

func (c *fileCmd) Run(ctx context.Context, args []string) error {
	fs := c.plainFlags("file")
	fs.Int64Var(&c.line, "line", 1, "start at line `N`, counting from 1 (default 1)")
	fs.Int64Var(&c.limit, "limit", 2000, "print at most `N` lines (default 2000; a page also stops at 24 KiB)")
	fs.Int64Var(&c.byteOffset, "byte-offset", -1, "continue from byte `N` of the file, a nextByteOffset (wins over --line; default none)")
	fs.Var(&c.deny, "deny", denyUsage)
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one PATH, got %d arguments", len(pos))
	}
	in := scrollback.ReadFileInput{Path: pos[0], Line: c.line, Limit: c.limit}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "byte-offset" {
			in.ByteOffset = &c.byteOffset
		}
	})
	if c.limit <= 0 {
		return badFlag("limit", "a positive number of lines", "100", c.limit)
	}
	if err := checkOffsetFlag("byte-offset", c.byteOffset); err != nil && in.ByteOffset != nil {
		return err
	}
	if c.line <= 0 {
		return badFlag("line", "a line number, counting from 1,", "1", c.line)
	}
	// Reading a file needs no store; only the line index's place.
	fo := fileOptions(c.io.Getenv)
	fo.Deny = c.deny
	eng := scrollback.New(nil, scrollback.Options{File: fo})
	page, err := eng.ReadFile(ctx, in)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(c.io.Stdout, page)
	}
	if _, err := io.WriteString(c.io.Stdout, page.Text); err != nil {
		return err
	}
	if page.HasMore {
		endNoteLine(c.io.Stderr, "file", page.Text, present.FileEnd(present.CLI(""), pos[0], page.StartLine, page.EndLine, page.TotalBytes, page.NextByteOffset, page.HasMore, page.MidLine()))
	}
	return nil
}
