package mcpserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/scrollback-dev/scrollback/filepager"
	"github.com/scrollback-dev/scrollback/present"
)

// Told is what a client receives before any call, as raw JSON: the
// server's instructions and each tool's name, description and input
// schema (what the contract calls "what the model is told"), and the whole
// tools/list result beside it.
type Told struct {
	Instructions int // bytes of the instructions, as sent (a JSON string)
	Tools        map[string]int
	Total        int // instructions plus every tool's {"name","description","inputSchema"}
	ListBytes    int // the whole tools/list result, output schemas and annotations included
}

// measureTold asks a server over streamable HTTP, as a client would, and
// counts the bytes of what it sends.
func measureTold(t *testing.T, h http.Handler) Told {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	s := &rawSession{url: ts.URL + Path, c: http.DefaultClient}
	init, err := s.post("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "told", "version": "v0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.post("notifications/initialized", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	list, err := s.post("tools/list", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var in struct{ Instructions json.RawMessage }
	var tl struct {
		Tools []struct {
			Name        json.RawMessage `json:"name"`
			Description json.RawMessage `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(init, &in); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(list, &tl); err != nil {
		t.Fatal(err)
	}
	told := Told{Instructions: len(in.Instructions), Tools: map[string]int{}, ListBytes: len(list)}
	told.Total = told.Instructions
	for _, tool := range tl.Tools {
		var name string
		json.Unmarshal(tool.Name, &name)
		n := len(`{"name":,"description":,"inputSchema":}`) + len(tool.Name) + len(tool.Description) + len(tool.InputSchema)
		told.Tools[name] = n
		told.Total += n
	}
	return told
}

// TestToldBudget: the tools' names, descriptions and input schemas and the
// server's instructions, as a client receives them, take at most
// present.ToldBudget (8 KiB, the contract's "what the model is told").
func TestToldBudget(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	told := measureTold(t, NewHTTPHandler(eng, HTTPOptions{JSONResponse: true}))
	t.Logf("told: %d bytes (instructions %d, tools %v); the whole tools/list result: %d bytes", told.Total, told.Instructions, told.Tools, told.ListBytes)
	if present.ToldBudget != 8192 {
		t.Errorf("ToldBudget is %d, the contract says 8 KiB", present.ToldBudget)
	}
	if told.Total > present.ToldBudget {
		t.Errorf("what the model is told takes %d bytes, over the %d-byte budget", told.Total, present.ToldBudget)
	}
	if len(told.Tools) != len(ToolNames()) {
		t.Errorf("measured %d tools, want %d", len(told.Tools), len(ToolNames()))
	}
}
