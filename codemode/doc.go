// Package codemode runs a model's JavaScript against a set of tools: Code
// Mode. A script calls tools.NAME(args) synchronously, gets each tool's
// structured result back as a JavaScript value, and returns a value of its
// own. It knows nothing of scrollback's engine: the tools, and the place
// oversized results are saved, come from the caller (package scrollback
// binds them to a session in Session.RunCode).
//
// # The bridge rule
//
// Every nested tool result passes through a bridge before the script sees
// it. When the result's text (a string result as the string itself, any
// other result as its JSON) is longer than the preview budget, the bridge
// saves it first, through Options.Save, and lists the saved copy's
// reference ({call, tool, output_id, totalBytes, complete}) in
// Result.Retained. The script receives the value unchanged. Whatever the
// script then slices, filters or drops, the reference stays in Retained,
// beside the script's return value. A result that is itself an object with
// a string "output_id" field (a run_command result carrying its own copy)
// has that id listed too, so no id made during a run is lost. Results within
// the budget are not copied.
//
// # How a script is run
//
// The code is the body of a function: it is wrapped as
//
//	(function() {
//	CODE
//	})
//
// so a top-level return gives the run's value, and line numbers in errors
// are the script's own (the wrapper's first line is subtracted). Code that
// closes the wrapper early is refused. Each run gets a fresh goja runtime
// holding only the ECMAScript built-ins, a tools object and a console
// object: no require, no timers, no file, network or process access.
// Tools are synchronous: call them without await.
//
// # Limits
//
// A run ends with an Error, never a panic or a hung process, when it goes
// past its timeout (goja's Interrupt, so while(true){} ends), makes more
// tool calls than allowed, recurses past the call stack limit, or grows the
// heap past the memory limit. The memory limit is enforced by a sampler
// that reads the Go heap (runtime/metrics) every few milliseconds and
// interrupts the script when the heap has grown by more than the limit
// since the run began; built-ins that could allocate a huge block in one
// native step (String.prototype.repeat, padStart, padEnd, the Array,
// ArrayBuffer and typed array constructors, Array.from, fill, join) refuse
// sizes past a share of the limit with a RangeError first. The sampler
// reads the whole process's heap, so concurrent runs share the headroom.
// Console output is kept up to a bound, with a note when it was cut.
package codemode
