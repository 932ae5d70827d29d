package preview_test

import (
	"fmt"
	"strings"

	"github.com/scrollback-dev/scrollback/preview"
)

func Example() {
	// 400 numbered lines, about 3 KB: too much for a 2 KiB preview.
	var b strings.Builder
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&b, "row %d\n", i)
	}
	data := []byte(b.String())
	fmt.Println(preview.Fits(data, 2048))

	p := preview.Render(data, preview.Options{Budget: 2048}, preview.Footer{
		ID:       "out_example",
		Complete: true,
		Status:   "exit status 0",
	})
	fmt.Println(p.Truncated, len(p.Text) <= 2048, p.HeadEnd, p.TailStart, p.OmittedLines)
	// The footer, between head and tail:
	i := strings.Index(p.Text, "[...")
	j := strings.Index(p.Text, "]\n")
	fmt.Println(p.Text[i : j+1])
	// Output:
	// false
	// true true 932 2476 193
	// [... 1544 bytes (193 whole lines) not shown, of 3092 bytes in 400 lines. Above: lines 1-130; below: lines 324-400.
	// Status: exit status 0.
	// The retained copy is complete. Read on: read_tool_output {"id":"out_example","offset":932}; search: grep_tool_output {"id":"out_example","pattern":"<RE2>"}.
	// Before saying a line, field or record is absent, search the copy and check the source's own pagination; without the evidence, say uncertain.]
}

func ExampleHistory() {
	small := []byte("{\"items\": []}\n")
	p := preview.History(small, preview.Footer{})
	fmt.Printf("%q %v\n", p.Text, p.Truncated)
	// Output:
	// "{\"items\": []}\n" false
}
