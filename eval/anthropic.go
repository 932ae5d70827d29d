package eval

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// Anthropic is a model behind Anthropic's Messages API, reached with the
// official Go SDK.
type Anthropic struct {
	client  anthropic.Client
	model   string
	baseURL string
	// MaxTokens bounds each message; 0 = 4096.
	MaxTokens int64
}

// NewAnthropic returns model at baseURL ("" = Anthropic's own API),
// authenticated with apiKey.
func NewAnthropic(baseURL, apiKey, model string) *Anthropic {
	opts := []option.RequestOption{option.WithAPIKey(apiKey), option.WithMaxRetries(2)}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	} else {
		baseURL = "https://api.anthropic.com"
	}
	return &Anthropic{client: anthropic.NewClient(opts...), model: model, baseURL: baseURL}
}

// Name implements Model.
func (m *Anthropic) Name() string { return "anthropic:" + m.model }

// Next implements Model.
func (m *Anthropic) Next(ctx context.Context, system string, tools []Tool, history []Message) (Reply, error) {
	p := anthropic.MessageNewParams{Model: anthropic.Model(m.model), MaxTokens: m.MaxTokens}
	if p.MaxTokens <= 0 {
		p.MaxTokens = 4096
	}
	if system != "" {
		p.System = []anthropic.TextBlockParam{{Text: system}}
	}
	// Consecutive tool results go into one user message, as the API asks.
	var results []anthropic.ContentBlockParamUnion
	flush := func() {
		if len(results) > 0 {
			p.Messages = append(p.Messages, anthropic.NewUserMessage(results...))
			results = nil
		}
	}
	for _, msg := range history {
		switch msg.Role {
		case "tool":
			results = append(results, anthropic.NewToolResultBlock(msg.ToolCallID, msg.Text, msg.IsError))
		case "user":
			flush()
			p.Messages = append(p.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(msg.Text)))
		case "assistant":
			flush()
			var blocks []anthropic.ContentBlockParamUnion
			if msg.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(msg.Text))
			}
			for _, c := range msg.ToolCalls {
				var input any = json.RawMessage(c.Args)
				if !json.Valid([]byte(c.Args)) {
					input = map[string]any{}
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, input, c.Name))
			}
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		}
	}
	flush()
	for _, t := range tools {
		var schema struct {
			Properties any      `json:"properties"`
			Required   []string `json:"required"`
		}
		json.Unmarshal(t.InputSchema, &schema)
		tp := anthropic.ToolParam{
			Name:        t.Name,
			Description: anthropic.String(t.Description),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: schema.Properties, Required: schema.Required},
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	res, err := m.client.Messages.New(ctx, p)
	if err != nil {
		return Reply{}, m.endpointError(err)
	}
	r := Reply{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens}
	var text []string
	for _, b := range res.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Args: string(b.Input)})
		}
	}
	r.Text = strings.Join(text, "\n")
	return r, nil
}

func (m *Anthropic) endpointError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	e := &EndpointError{Provider: "Anthropic", URL: m.baseURL, Err: err}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		e.Status = apiErr.StatusCode
		e.Err = errors.New(firstLine(apiErr.RawJSON()))
	}
	return e
}

// firstLine returns the first non-empty of ss, cut to one line of at most
// 200 bytes, for an error message.
func firstLine(ss ...string) string {
	for _, s := range ss {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[:i]
		}
		if len(s) > 200 {
			s = utf8x.Cut(s, 200) + "…"
		}
		return s
	}
	return "no message"
}
