package grep_test

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/scrollback-dev/scrollback/grep"
)

// Search a copy two matches at a time, continuing from NextOffset.
func ExampleSearch() {
	text := "build ok\nwarning: unused x\nerror: undefined y\r\nwarning: shadowed z\ndone\n"
	re := regexp.MustCompile(`^(warning|error):`)
	opts := grep.Options{Max: 2, Context: 1}
	for {
		res, err := grep.Search(strings.NewReader(text), int64(len(text)), re, opts)
		if err != nil {
			panic(err)
		}
		for _, m := range res.Matches {
			fmt.Printf("line %d at offset %d: %q (%d before, %d after)\n", m.Number, m.Offset, m.Text, len(m.Before), len(m.After))
		}
		fmt.Println("hasMore:", res.HasMore, "nextOffset:", res.NextOffset)
		if !res.HasMore {
			break
		}
		opts.Offset = res.NextOffset
	}
	// Output:
	// line 2 at offset 9: "warning: unused x" (1 before, 1 after)
	// line 3 at offset 27: "error: undefined y" (1 before, 1 after)
	// hasMore: true nextOffset: 47
	// line 4 at offset 47: "warning: shadowed z" (1 before, 1 after)
	// hasMore: false nextOffset: 72
}
