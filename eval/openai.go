package eval

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAI is a model behind an OpenAI-compatible Chat Completions endpoint
// (OpenAI, ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter),
// reached with the official Go SDK.
type OpenAI struct {
	client  openai.Client
	model   string
	baseURL string
	// MaxTokens bounds each completion; 0 = the endpoint's default.
	MaxTokens int64
}

// NewOpenAI returns a model named model at baseURL (e.g.
// http://localhost:11434/v1), authenticated with apiKey when it is not
// empty.
func NewOpenAI(baseURL, apiKey, model string) *OpenAI {
	if apiKey == "" {
		apiKey = "none" // local servers take any key; the SDK wants one
	}
	c := openai.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey(apiKey), option.WithMaxRetries(2))
	return &OpenAI{client: c, model: model, baseURL: baseURL}
}

// Name implements Model.
func (m *OpenAI) Name() string { return "openai:" + m.model }

// Next implements Model.
func (m *OpenAI) Next(ctx context.Context, system string, tools []Tool, history []Message) (Reply, error) {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(m.model)}
	if m.MaxTokens > 0 {
		p.MaxCompletionTokens = openai.Int(m.MaxTokens)
	}
	if system != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(system))
	}
	for _, msg := range history {
		switch msg.Role {
		case "user":
			p.Messages = append(p.Messages, openai.UserMessage(msg.Text))
		case "tool":
			p.Messages = append(p.Messages, openai.ToolMessage(msg.Text, msg.ToolCallID))
		case "assistant":
			a := openai.ChatCompletionAssistantMessageParam{}
			if msg.Text != "" {
				a.Content.OfString = openai.String(msg.Text)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Args},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	for _, t := range tools {
		var params map[string]any
		if err := json.Unmarshal(t.InputSchema, &params); err != nil {
			params = map[string]any{"type": "object"}
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  shared.FunctionParameters(params),
		}))
	}
	res, err := m.client.Chat.Completions.New(ctx, p)
	if err != nil {
		return Reply{}, m.endpointError(err)
	}
	if len(res.Choices) == 0 {
		return Reply{}, &EndpointError{Provider: "OpenAI-compatible", URL: m.baseURL, Err: errors.New("the completion has no choices")}
	}
	msg := res.Choices[0].Message
	r := Reply{Text: msg.Content, InputTokens: res.Usage.PromptTokens, OutputTokens: res.Usage.CompletionTokens}
	for _, c := range msg.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Args: c.Function.Arguments})
	}
	return r, nil
}

func (m *OpenAI) endpointError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	e := &EndpointError{Provider: "OpenAI-compatible", URL: m.baseURL, Err: err}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		e.Status = apiErr.StatusCode
		e.Err = errors.New(firstLine(apiErr.Message, apiErr.RawJSON()))
	}
	return e
}
