package jsonq_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/scrollback-dev/scrollback/jsonq"
)

// Filtering JSON Lines: the filter runs on each document.
func ExampleRun() {
	copy := "{\"level\":\"info\",\"msg\":\"start\"}\n{\"level\":\"error\",\"msg\":\"disk full\"}\n"
	f, err := jsonq.Compile(`select(.level == "error") | .msg`)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := jsonq.Run(context.Background(), f, strings.NewReader(copy), int64(len(copy)), jsonq.Options{Complete: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s%d documents, %d result\n", res.Text, res.Documents, res.Results)

	_, err = jsonq.Compile("env.HOME")
	fmt.Println(err)
	// Output:
	// "disk full"
	// 2 documents, 1 result
	// the filter uses env, which is not available; a filter reads only the retained copy, given as its input (.); input, inputs, env and $ENV are refused
}

// The outline of a document: where each top-level value starts.
func ExampleOutlineOf() {
	doc := []byte(`{"items": [1, 2, 3], "summary": {"total": 6}}`)
	o, ok := jsonq.OutlineOf(doc)
	fmt.Println(ok)
	fmt.Print(o.Text(1024))
	// Output:
	// true
	// JSON object of 2 keys, 45 bytes:
	//   .items: array of 3, at 10, 9 bytes
	//     .items[0]: number, at 11, 1 byte
	//     .items[2]: number, at 17, 1 byte
	//   .summary: object of 1 key, at 32, 12 bytes
	//     .summary.total: number, at 42, 1 byte
}
