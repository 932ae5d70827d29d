// Package eval measures whether a model answers right through scrollback.
//
// It runs a suite of scenarios — each a small data file under scenarios/,
// embedded in the binary — against a model endpoint, in two modes side by
// side:
//
//   - ModeScrollback: the tools exactly as `scrollback mcp` lists them
//     (names, descriptions, input schemas and instructions taken from the
//     server), called through an in-process MCP client session, so the real
//     MCP path is exercised;
//   - ModeTruncate, the baseline: the same model and scenario, where
//     run_command shows only the first 24 KiB with an "[output truncated]"
//     marker and no id, there is no reader, grep or Code Mode, and read_file
//     sees only a 256 KiB prefix of the file, as agents without scrollback
//     behave.
//
// Each run gets a fresh working directory, a fresh temporary database and a
// fresh session. A scenario declares its setup (files and counting scripts,
// generated deterministically), the user's question, a checker for the final
// answer, and behaviour checks: the source ran exactly once (counted by the
// script itself), and, where the right answer is an absence, a copy was read
// or searched before it was claimed.
//
// Models are reached through the official SDKs: OpenAI-compatible Chat
// Completions with github.com/openai/openai-go/v3 (OpenAI, ollama, vLLM,
// llama.cpp's server, LM Studio, OpenRouter) and Anthropic's Messages API
// with github.com/anthropics/anthropic-sdk-go/v2. Package evaltest serves a
// scripted model over both protocols, which the tests use to prove that
// every checker can fail.
package eval
