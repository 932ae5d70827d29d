// Package preview cuts tool output to what a model sees at once: a head, a
// footer and a tail, within a byte budget.
//
// When a result fits its budget it is shown whole (Fits, then Render returns
// it unchanged but for invalid UTF-8 bytes, each shown as U+FFFD). When it
// does not, Render keeps about two thirds of the budget for the head and one
// third for the tail, never splitting a UTF-8 character (the rules of
// internal/utf8x) and preferring to cut at line ends. Between the two it puts
// a plain-text footer that tells the model, as an instruction, how many bytes
// and lines it did not see, whether the retained copy is complete, and the
// exact read_tool_output call, id and offset, that continues where the head
// stopped. When no copy could be saved, the footer says that recovery is
// unavailable and why, and that the bytes not shown cannot be read back.
//
// The footer also carries, briefly, the rule the model must follow: a preview
// is not the whole result; before claiming that something is absent, read the
// retained copy and check the source's own pagination; when the evidence
// cannot be obtained, say it is uncertain.
//
// Two budgets come from the product contract: Budget (24 KiB) for what
// run_command and run_code show, and HistoryBudget (32 KiB, head and tail)
// for results entering a conversation history, which History applies.
//
// Render works on a copy held in memory (at most the copy cap, 8 MiB);
// RenderAt works on one read through an io.ReaderAt, such as a retained copy
// in a store, and reads only about twice the budget when the line count is
// known. Either costs O(budget) plus, at most, one newline count of the data.
package preview
