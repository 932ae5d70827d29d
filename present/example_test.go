package present_test

import (
	"fmt"

	"github.com/scrollback-dev/scrollback/present"
)

// A Surface names the call that continues a copy where the text is read:
// MCP tools for a model, CLI commands (with the session) for a person.
func ExampleSurface_Read() {
	fmt.Println(present.MCP.Read("out_x", 4096))
	fmt.Println(present.CLI("s_y").Read("out_x", 4096))
	fmt.Println(present.MCP.Grep("out_x"))
	// Output:
	// read_tool_output {"id":"out_x","offset":4096}
	// scrollback read --session s_y --offset 4096 out_x
	// grep_tool_output {"id":"out_x","pattern":"<RE2>"}
}

// Clip cuts a text to a byte budget at a word's end, never inside a
// character, and says how much it cut.
func ExampleClip() {
	fmt.Println(present.Clip("déjà vu: the same command, run again and again and again", 40))
	// Output: déjà vu: the same…(39 bytes cut)
}
