package capture_test

import (
	"fmt"
	"strings"

	"github.com/scrollback-dev/scrollback/capture"
)

func Example() {
	c := capture.New(capture.Limits{})
	fmt.Fprintln(c.Stdout(), "building...")
	fmt.Fprintln(c.Stderr(), "warning: unused variable")
	fmt.Fprintln(c.Stdout(), "done")

	r := c.Result()
	fmt.Printf("%s", r.Copy)
	fmt.Println(r.StdoutBytes, r.StderrBytes, r.Complete)
	// Output:
	// building...
	// warning: unused variable
	// done
	// 17 25 true
}

// A copy cap that is crossed keeps the head and the tail, with a marker line
// that says what was dropped between them.
func Example_gap() {
	c := capture.New(capture.Limits{Copy: 600, Tail: 100})
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(c.Writer(), "row %03d\n", i)
	}
	fmt.Fprintln(c.Writer(), "TOTAL 100 rows")

	r := c.Result()
	lines := strings.Split(string(r.Copy), "\n")
	fmt.Println(lines[0])
	fmt.Println("...")
	for _, l := range lines[len(lines)-14:] {
		fmt.Println(l)
	}
	fmt.Println(r.Complete, r.Gap.Bytes, r.Gap.Lines)
	// Output:
	// row 001
	// ...
	// row 044
	// [scrollback: 368 bytes (46 lines) dropped here: the copy cap of 600 bytes was crossed]
	// row 091
	// row 092
	// row 093
	// row 094
	// row 095
	// row 096
	// row 097
	// row 098
	// row 099
	// row 100
	// TOTAL 100 rows
	//
	// false 368 46
}
