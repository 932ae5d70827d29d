package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Message is one message of a conversation, in a form both providers map
// to their own.
type Message struct {
	// Role is "user", "assistant" or "tool".
	Role string `json:"role"`
	// Text is the message's text: the user's question, the assistant's
	// words, or a tool result as the model reads it.
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls an assistant message makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID answers which call a tool message is the result of.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// IsError marks a tool result that is an error.
	IsError bool `json:"is_error,omitempty"`
}

// ToolCall is one tool call of the model. Args holds the arguments exactly
// as the model sent them, which may not be valid JSON.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args string `json:"args"`
}

// Tool is a tool offered to the model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Reply is one turn of the model: its text and the tool calls it makes
// (none when it has answered), with the tokens the turn cost.
type Reply struct {
	Text         string
	ToolCalls    []ToolCall
	InputTokens  int64
	OutputTokens int64
}

// A Model answers a conversation.
type Model interface {
	// Next returns the model's next turn. An error is a failure of the
	// endpoint (unreachable, refused, a server error): it ends the whole
	// evaluation, since no result measured through a broken endpoint is
	// worth reporting.
	Next(ctx context.Context, system string, tools []Tool, history []Message) (Reply, error)
	// Name says which provider and model answer, for reports.
	Name() string
}

// EndpointError is a model endpoint that failed: it ends the evaluation.
type EndpointError struct {
	Provider string
	URL      string
	Status   int // the HTTP status, or 0 when there was no answer
	Err      error
}

func (e *EndpointError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("the %s endpoint %s answered HTTP %d: %v", e.Provider, e.URL, e.Status, e.Err)
	}
	return fmt.Sprintf("the %s endpoint %s cannot be reached: %v", e.Provider, e.URL, e.Err)
}

func (e *EndpointError) Unwrap() error { return e.Err }

// IsEndpointError reports whether err is a failure of the model endpoint.
func IsEndpointError(err error) bool {
	var e *EndpointError
	return errors.As(err, &e)
}
