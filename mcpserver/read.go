package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/present"
)

// read_tool_output is the call a model makes most, often many times in a
// row, so it is not registered with a typed handler: for every typed call
// the SDK decodes the arguments twice (into a map to validate them against
// the input schema, then into the input type), and encodes the result,
// decodes it again and validates it against the output schema, each
// decoding allocating a 32 KiB buffer. Its handler below decodes the three
// arguments once. Arguments that are not plainly valid (a missing id, an
// unknown or mis-typed field, a null) go the SDK's way, validated against
// the same schema, so that every error reads as for the other tools. The
// schemas are those the SDK would infer, computed on first use (not at
// start-up: every process, `scrollback version` too, would pay for them).
var readTool = sync.OnceValue(func() *mcp.Tool {
	t := &mcp.Tool{
		Name:         "read_tool_output",
		Title:        "Read a retained copy",
		Description:  present.ReadToolOutputDoc,
		Annotations:  &mcp.ToolAnnotations{Title: "Read a retained copy", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
		InputSchema:  mustSchema[scrollback.ReadInput](),
		OutputSchema: mustSchema[scrollback.Page](),
	}
	return t
})

// readInputSchema validates arguments that the fast path refuses.
var readInputSchema = sync.OnceValue(func() *jsonschema.Resolved {
	r, err := readTool().InputSchema.(*jsonschema.Schema).Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic("mcpserver: the read_tool_output input schema does not resolve: " + err.Error())
	}
	return r
})

// mustSchema is the schema the SDK infers for T.
func mustSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.ForType(reflect.TypeFor[T](), &jsonschema.ForOptions{})
	if err != nil {
		panic("mcpserver: cannot infer a schema: " + err.Error()) // the types are ours: cannot happen
	}
	return s
}

func addReadToolOutput(srv *mcp.Server, b *Binding) {
	srv.AddTool(readTool(), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in, err := readArgs(req.Params.Arguments)
		if err != nil {
			return errorResult(err), nil
		}
		s, err := b.Session(ctx)
		if err != nil {
			return errorResult(err), nil
		}
		page, err := s.ReadToolOutput(ctx, in)
		if err != nil {
			return errorResult(err), nil
		}
		text := pageText(in, page)
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: text[0]}, &mcp.TextContent{Text: text[1]}},
			StructuredContent: page, // matches the output schema by construction
		}, nil
	})
}

// errorResult is a tool error carrying err's message, as the SDK makes one
// for a typed handler's error.
func errorResult(err error) *mcp.CallToolResult {
	var r mcp.CallToolResult
	r.SetError(err)
	return &r
}

// readArgs decodes read_tool_output's arguments. The fast path takes an
// object whose keys are among id (a string), offset and limit (integers
// written without fraction or exponent); anything else is decoded as the
// SDK decodes a typed tool's arguments.
func readArgs(raw json.RawMessage) (scrollback.ReadInput, error) {
	if in, ok := quickArgs(raw); ok {
		return in, nil
	}
	var in scrollback.ReadInput
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return slowArgs(raw)
	}
	for k, v := range fields {
		switch k {
		case "id":
			if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &in.ID) != nil {
				return slowArgs(raw)
			}
		case "offset":
			n, ok := jsonInt(v)
			if !ok {
				return slowArgs(raw)
			}
			in.Offset = n
		case "limit":
			n, ok := jsonInt(v)
			if !ok || int64(int(n)) != n {
				return slowArgs(raw)
			}
			in.Limit = ptr(int(n))
		default:
			return slowArgs(raw)
		}
	}
	if _, ok := fields["id"]; !ok {
		return slowArgs(raw)
	}
	return in, nil
}

// quickArgs decodes the arguments clients send, an object of an id
// (ASCII, no escapes) and an offset and a limit written as jsonInt
// takes them, each at most once, without encoding/json: decoding them
// into a map cost a few percent of a page's CPU, half of it the runtime
// growing the request goroutine's stack for encoding/json's reflection.
// It reports false for anything else, which readArgs decodes as before.
func quickArgs(raw []byte) (in scrollback.ReadInput, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return in, false
	}
	var seenID, seenOffset, seenLimit bool
	for i = skipSpace(raw, i+1); ; i = skipSpace(raw, i+1) {
		key, j, ok := plainString(raw, i)
		if !ok {
			return in, false
		}
		if i = skipSpace(raw, j); i >= len(raw) || raw[i] != ':' {
			return in, false
		}
		i = skipSpace(raw, i+1)
		switch string(key) {
		case "id":
			id, j, ok := plainString(raw, i)
			if !ok || seenID {
				return in, false
			}
			in.ID, seenID, i = string(id), true, j
		case "offset", "limit":
			j := i
			for j < len(raw) && raw[j] != ',' && raw[j] != '}' && !isSpace(raw[j]) {
				j++
			}
			n, ok := jsonInt(raw[i:j])
			if !ok {
				return in, false
			}
			if string(key) == "offset" {
				if seenOffset {
					return in, false
				}
				in.Offset, seenOffset = n, true
			} else {
				if seenLimit || int64(int(n)) != n {
					return in, false
				}
				in.Limit, seenLimit = ptr(int(n)), true
			}
			i = j
		default:
			return in, false
		}
		if i = skipSpace(raw, i); i >= len(raw) {
			return in, false
		}
		if raw[i] == '}' {
			break
		}
		if raw[i] != ',' {
			return in, false
		}
	}
	return in, seenID && skipSpace(raw, i+1) == len(raw)
}

// plainString returns the JSON string at raw[i:] when it holds only
// printable ASCII and no escapes, and the index after it.
func plainString(raw []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(raw) || raw[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(raw); j++ {
		switch c := raw[j]; {
		case c == '"':
			return raw[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipSpace returns the index of the first byte of raw[i:] that is not
// JSON whitespace.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && isSpace(raw[i]) {
		i++
	}
	return i
}

// jsonInt parses a JSON number written as a plain integer of at most 2^53
// in magnitude: larger ones go the SDK's way, which decodes numbers as
// float64 and so rounds them.
func jsonInt(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 17 {
		return 0, false
	}
	for i, c := range v {
		if !('0' <= c && c <= '9' || c == '-' && i == 0) {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil && -1<<53 <= n && n <= 1<<53
}

// slowArgs validates raw against the input schema, applying its defaults,
// then decodes it: what the SDK does for a typed tool, with its messages.
func slowArgs(raw json.RawMessage) (scrollback.ReadInput, error) {
	var in scrollback.ReadInput
	var v any = map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &v); err != nil {
			return in, fmt.Errorf("validating \"arguments\": unmarshaling arguments: %w", err)
		}
	}
	if _, ok := v.(map[string]any); ok {
		if err := readInputSchema().ApplyDefaults(&v); err != nil {
			return in, fmt.Errorf("validating \"arguments\": applying schema defaults:\n%w", err)
		}
	}
	if err := readInputSchema().Validate(&v); err != nil {
		return in, fmt.Errorf("validating \"arguments\": %v", err)
	}
	data, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(data, &in)
	}
	return in, err
}
