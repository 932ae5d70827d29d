// Package present owns every text scrollback shows a model (or a person):
// the footer of a preview, the line after a page, a search or a query, the
// wording of a copy that is incomplete, unavailable, evicted or has a gap,
// the marker line at a gap, the one way a string is cut and marked, the
// tools' descriptions and the server's instructions, the labels of the
// copies a Code Mode run made, and the _meta keys of a result.
//
// One package, so that a word changed here changes everywhere, and so that
// a golden test (testdata/*.golden) shows every text at once, to be read as
// a whole for accuracy and brevity.
//
// A text that names a call to make names it for where it is read: a
// Surface. Over MCP (and in the Go API) it names the MCP tools with their
// arguments as JSON, read_tool_output {"id":"out_x","offset":4096}; at a
// terminal (the CLI) it names the CLI's commands, scrollback read --offset
// 4096 out_x. Neither names the other's.
//
// Where it stands: present imports only the UTF-8 rules (internal/utf8x),
// so that every package that writes a text a model reads can use it — the
// preview cutter, capture (the gap marker), the store (the eviction
// message), Code Mode, the engine, the MCP server, the proxy and the CLI:
//
//	utf8x → present → preview, capture, store, codemode → scrollback → mcpserver → proxy → cli
//
// It holds no behaviour beyond words: it decides what a text says, never
// what a tool does.
package present
