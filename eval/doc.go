// Package eval measures whether a model answers right through scrollback,
// beside the baselines agents use without it.
//
// It runs a suite of scenarios — each a small data file under scenarios/,
// embedded in the binary — against a model endpoint, in up to three modes
// side by side:
//
//   - ModeScrollback: the tools exactly as `scrollback mcp` lists them
//     (names, descriptions, input schemas and instructions taken from the
//     server), and upstream MCP tools behind `scrollback proxy`, called
//     through in-process MCP client sessions, so the real MCP path is
//     exercised;
//   - ModeSpill, the best agents' baseline (as Claude Code does): a result
//     over 24 KiB is written to a file, and the model sees its first 2 KB
//     and the file's path, with a shell and read_file to search it;
//   - ModeTruncate, what agents did before: a 24 KiB head, no id, no reader.
//
// A scenario declares its client: ClientAgent (a shell and read_file in
// every mode) or ClientChat (only the upstream MCP tools, plus scrollback's
// readers in scrollback mode). Sealed scenarios' output exists only once:
// the harness serves each sealed output once, over a local HTTP server (a
// second fetch answers 410 Gone) or through an upstream MCP tool, and
// counts a second serve as a re-run.
//
// Each run gets a fresh working directory; the store, a fresh database and
// session, lives outside it. A run is Correct (the true answer, whatever
// route found it), Uncertain (it said it cannot tell, where the evidence
// really is lost in that mode) or Wrong; an absence is right only after a
// full copy was searched. The report gives per scenario and mode the three
// counts, re-runs, tool calls, tokens and input tokens per correct answer.
//
// Models are reached through the official SDKs: OpenAI-compatible Chat
// Completions with github.com/openai/openai-go/v3 (OpenAI, ollama, vLLM,
// llama.cpp's server, LM Studio, OpenRouter) and Anthropic's Messages API
// with github.com/anthropics/anthropic-sdk-go/v2. That is why the package
// is built into cmd/scrollback-eval and never into the scrollback binary.
// Package evaltest serves a scripted model over both protocols, which the
// tests use to prove that every checker can fail.
package eval
