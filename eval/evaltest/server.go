package evaltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/scrollback-dev/scrollback/eval"
)

// Server is a scripted model behind both protocols: POST .../chat/completions
// (OpenAI-compatible) and POST .../messages (Anthropic), with or without a
// /v1 prefix. Each turn is decided by its Policy from the conversation the
// request carries; the server keeps no state between requests.
type Server struct {
	policy    Policy
	scenarios []*eval.Scenario
	calls     atomic.Int64

	mu     sync.Mutex
	status int    // when not 0, every request fails with this HTTP status
	body   string // and this body
}

// NewServer returns a scripted model that answers with p, for questions of
// scenarios.
func NewServer(p Policy, scenarios []*eval.Scenario) *Server {
	return &Server{policy: p, scenarios: scenarios}
}

// Fail makes every later request fail with HTTP status and body, as an
// endpoint that refuses a key (401) or breaks (500) does.
func (s *Server) Fail(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

// Requests returns how many requests the server has answered.
func (s *Server) Requests() int64 { return s.calls.Load() }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	s.mu.Lock()
	status, body := s.status, s.body
	s.mu.Unlock()
	if status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		s.openAI(w, r)
	case strings.HasSuffix(r.URL.Path, "/messages"):
		s.anthropic(w, r)
	default:
		http.Error(w, "no such endpoint: "+r.URL.Path, http.StatusNotFound)
	}
}

func (s *Server) decide(tools []string, history []eval.Message) (eval.Reply, error) {
	var question string
	for _, m := range history {
		if m.Role == "user" {
			question = m.Text
			break
		}
	}
	sc, vars, err := identify(s.scenarios, question)
	if err != nil {
		return eval.Reply{}, err
	}
	reply := s.policy.Next(Turn{Scenario: sc, Vars: vars, Tools: tools, History: history})
	n := len(history)
	for i := range reply.ToolCalls {
		reply.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", n, i)
	}
	return reply, nil
}

// tokens estimates a token count as a quarter of the bytes.
func tokens(n int) int64 { return int64(n+3) / 4 }

// decodeRequest decodes a request's body into req and returns the bytes
// of what a model reads besides the messages: the tools' definitions (names,
// descriptions, schemas) and an Anthropic system prompt. A real model is
// billed for them on every turn, so the scripted count includes them.
func decodeRequest(r *http.Request, req any) (int, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(body, req); err != nil {
		return 0, err
	}
	var extra struct {
		Tools  json.RawMessage `json:"tools"`
		System json.RawMessage `json:"system"`
	}
	json.Unmarshal(body, &extra)
	return len(extra.Tools) + len(text(extra.System)), nil
}

type oaiMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCalls  []oaiToolCall   `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

type oaiToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// text reads a content field that is a string or a list of text parts.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (s *Server) openAI(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string       `json:"model"`
		Messages []oaiMessage `json:"messages"`
		Tools    []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	size, err := decodeRequest(r, &req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var history []eval.Message
	for _, m := range req.Messages {
		t := text(m.Content)
		size += len(t)
		msg := eval.Message{Role: m.Role, Text: t, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, eval.ToolCall{ID: c.ID, Name: c.Function.Name, Args: c.Function.Arguments})
		}
		if m.Role != "system" {
			history = append(history, msg)
		}
	}
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Function.Name)
	}
	reply, err := s.decide(tools, history)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	msg := map[string]any{"role": "assistant", "content": reply.Text}
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		var calls []map[string]any
		for _, c := range reply.ToolCalls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Args}})
		}
		msg["tool_calls"] = calls
		msg["content"] = nil
		finish = "tool_calls"
	}
	out := tokens(len(reply.Text) + 40*len(reply.ToolCalls))
	in := tokens(size)
	writeJSON(w, map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", s.calls.Load()), "object": "chat.completion", "created": 0, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out},
	})
}

func (s *Server) anthropic(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	size, err := decodeRequest(r, &req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var history []eval.Message
	for _, m := range req.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			history = append(history, eval.Message{Role: m.Role, Text: s})
			size += len(s)
			continue
		}
		var blocks []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		json.Unmarshal(m.Content, &blocks)
		msg := eval.Message{Role: m.Role}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				msg.Text += b.Text
				size += len(b.Text)
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, eval.ToolCall{ID: b.ID, Name: b.Name, Args: string(b.Input)})
			case "tool_result":
				t := text(b.Content)
				size += len(t)
				history = append(history, eval.Message{Role: "tool", ToolCallID: b.ToolUseID, Text: t, IsError: b.IsError})
			}
		}
		if msg.Text != "" || len(msg.ToolCalls) > 0 {
			history = append(history, msg)
		}
	}
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Name)
	}
	reply, err := s.decide(tools, history)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var content []any
	if reply.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": reply.Text})
	}
	stop := "end_turn"
	for _, c := range reply.ToolCalls {
		var input any = json.RawMessage(c.Args)
		if !json.Valid([]byte(c.Args)) {
			// The Messages API carries input as an object; a scripted
			// mistake goes as a string the harness cannot read as one.
			input = c.Args
		}
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": input})
		stop = "tool_use"
	}
	writeJSON(w, map[string]any{
		"id": fmt.Sprintf("msg_%d", s.calls.Load()), "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": stop,
		"usage": map[string]any{"input_tokens": tokens(size), "output_tokens": tokens(len(reply.Text) + 40*len(reply.ToolCalls))},
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
