// Package preview cuts tool output to what a model sees at once: a head, a
// footer and a tail, within a byte budget.
//
// When a result fits its budget it is shown whole (Fits, then Render returns
// it unchanged but for invalid UTF-8 bytes, each shown as U+FFFD). When it
// does not, Render cuts it to the shown size (Options.Shown: ShownBudget,
// 1,280 bytes, once the result is retained; the whole budget when no copy
// could be saved): by default 2/5 of it for the footer (more, up to 7/8,
// when a richer footer needs it), and of the rest three fifths for the head
// and two for the tail, never splitting a UTF-8 character (the rules of
// internal/utf8x) and preferring to cut at line ends. Between the two it
// puts the footer, whose words package present writes: how many bytes and
// lines the model did not see, whether the retained copy is complete, the
// exact call that continues where the head stopped, the first error-like
// lines of the part not shown, a JSON copy's outline, and the rule the model
// must follow — a preview is not the whole result. The footer takes the
// richest form that fits the room the head and tail leave it.
//
// Two budgets come from the product contract: Budget (24 KiB) for what
// run_command and run_code show at once, and HistoryBudget (32 KiB) for
// results entering a conversation history, which History applies; and one
// shown size, ShownBudget (1,280 bytes), for what a result over either shows once
// it is retained.
//
// Render works on a copy held in memory (at most the copy cap, 8 MiB);
// RenderAt works on one read through an io.ReaderAt, such as a retained copy
// in a store, and reads only about twice the budget when the line count is
// known. Either costs O(budget) plus, at most, one newline count of the data.
package preview
