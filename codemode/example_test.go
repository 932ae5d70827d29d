package codemode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scrollback-dev/scrollback/codemode"
)

// A script calls a tool whose result is too large to show; the bridge saves
// it before the script slices it, and the reference survives in Retained.
func Example() {
	logs := codemode.Tool{
		Name:        "logs",
		Description: "Fetch the service's logs.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"}},"required":["service"]}`),
		Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			return json.Marshal(strings.Repeat("ok\n", 20000) + "FATAL: disk full\n")
		},
	}
	saved := map[string][]byte{}
	save := func(ctx context.Context, c codemode.Copy) (string, error) {
		id := fmt.Sprintf("out_%d", len(saved)+1)
		saved[id] = c.Text
		return id, nil
	}
	code := `
const text: string = await tools.logs({service: "api"});
console.log("lines:", text.split("\n").length);
return text.slice(0, 6);`
	res := codemode.Run(context.Background(), code, []codemode.Tool{logs}, codemode.Options{Save: save})
	fmt.Printf("value: %q\n", res.Value)
	fmt.Print("logs: ", res.Logs)
	for _, r := range res.Retained {
		fmt.Printf("retained: call %d %s -> %s, %d bytes, complete %v, ends %q\n",
			r.Call, r.Tool, r.OutputID, r.TotalBytes, r.Complete, saved[r.OutputID][r.TotalBytes-17:])
	}
	fmt.Print(codemode.Describe([]codemode.Tool{logs}))
	// Output:
	// value: "ok\nok\n"
	// logs: lines: 20002
	// retained: call 1 logs -> out_1, 60017 bytes, complete true, ends "FATAL: disk full\n"
	// declare const tools: {
	//   // Fetch the service's logs.
	//   logs(input: { service: string }): Promise<any>;
	// };
}

// Errors carry the line and column of the code as written, TypeScript
// included.
func ExampleRun_error() {
	res := codemode.Run(context.Background(), "interface A { x: number }\nconst a: A | null = null;\na!.x;", nil, codemode.Options{})
	fmt.Println(res.Error.Kind, res.Error.Line, res.Error.Column)
	// Output: exception 3 4
}
