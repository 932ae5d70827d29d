// Package jsonq runs jq filters over a retained copy that holds JSON, and
// outlines a JSON document's shape for a preview's footer.
//
// Run reads the copy through an io.ReaderAt one stored chunk at a time,
// decoding it as a stream of JSON values: one document, JSON Lines, or
// documents one after another (jq's own reading, so no detection can go
// wrong). Each document is decoded, filtered with gojq
// (github.com/itchyny/gojq) and dropped before the next is read, so memory
// holds one document's values and the results, not a second copy of the
// text. The results are compact JSON, one a line, each ending in "\n".
//
// A filter reads nothing but the copy: input, inputs, env and $ENV are
// refused when the filter is compiled, no module loader is configured, and
// the filter runs under a time limit, an output limit and a memory limit
// (Options), which stop it with ErrTimeLimit, ErrOutputLimit or
// ErrMemoryLimit. Documents nesting deeper
// than MaxDepth and number literals longer than MaxNumberLen are errors
// that name their offset, never a crash, and so are results nesting deeper
// than MaxDepth. A number beyond float64's range reads as gojq reads it:
// the largest float (or 0, when too small).
//
// A copy that is not JSON is an error naming the byte offset and line where
// parsing stopped and the bytes found there. When the copy is incomplete
// (cut at a cap), a stream is filtered as far as its whole documents go
// (Result.Stopped says where the rest was dropped); JSON Lines whose middle
// a cap dropped are filtered on both sides of the marker line capture put
// in its place (capture.ParseMarker), from the first line after it that is
// surely a whole document (Result.Gaps says where and what was passed
// over). A single document cut short, or whose middle a cap dropped, is
// ErrCut, whose message says the copy was cut at that cap, where and by
// how much.
package jsonq
