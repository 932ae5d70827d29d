// Package codemode runs a model's TypeScript or JavaScript against a set of
// tools: Code Mode. A script calls tools.NAME(args), with or without await,
// gets each tool's structured result back as a JavaScript value, and
// returns a value of its own. It knows nothing of scrollback's engine: the tools, and the place
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
// The code is the body of an async function: it is wrapped as
//
//	(async function() {
//	CODE
//	})
//
// and transpiled by esbuild (loader ts: type annotations, interfaces,
// enums, generics, as and ! are accepted and removed; async generators and
// for await, which goja lacks, are lowered), with a source map, so that
// every error's line and column are those of the code as written. A
// top-level return gives the run's value; a returned promise is settled
// first. goja runs the promise jobs after each await before the call
// returns, so await needs no event loop; a promise that nothing can settle
// (there are no timers, and tools answer at once) ends the run at its
// timeout, which says so. Code that closes the wrapper early is refused.
//
// Tools are synchronous Go calls underneath. Each object result also has a
// non-enumerable then (and a promise's catch and finally) that resolves to
// the object itself, so tools.x({}).field, (await tools.x({})).field,
// Promise.all([...]) and tools.x({}).then(f) all see the same value. A
// failing tool throws at the call (try/catch around the call, with or
// without await, catches it), except where the script handles the call's
// promise itself (tools.x({}).catch(f), .then, .finally, or the call as an
// element of Promise.all([...]) and its kin): the compiler calls those
// through a helper that turns the throw into a rejected promise. A string
// result has no then, but await works on it.
//
// Each run gets a fresh goja runtime holding only the ECMAScript built-ins,
// small polyfills for what goja lacks (Object.groupBy, Map.groupBy,
// structuredClone, Promise.withResolvers, queueMicrotask, named groups,
// en-US Number.prototype.toLocaleString), a tools object
// and a console object (log, info, debug, warn, error: all into the logs):
// no require, no timers, no file, network or process access.
//
// # Limits
//
// A run ends with an Error, never a panic or a hung process, when it goes
// past its timeout (goja's Interrupt, so while(true){} ends), makes more
// tool calls than allowed, recurses past the call stack limit, or grows the
// heap past the memory limit. The memory limit is enforced by a watch that
// reads the Go heap (runtime/metrics) every millisecond; past the limit it
// asks for a collection, and it takes the verdict of every collection
// cycle that ends, the runtime's own too, as soon as its marking ends: the
// script is interrupted when one cycle finds the limit passed by more than
// was allocated while it ran, or two successive cycles find it passed; or,
// when the collection is held up by the script itself (one huge native
// copy stalls it) and the heap is past the limit plus a slack, without
// waiting for it. One allocation of 3/8 of the limit or
// more (and at least 64 MiB) stops the script at once, under the limit: a
// doubling string's next step would pass it in a copy nothing interrupts.
// While runs with a limit go, the runtime's soft memory limit
// (debug.SetMemoryLimit) is lowered to their needs, never above the one
// set before, which is put back when the last run ends. Built-ins that
// could allocate a huge block in one native step (String.prototype.repeat,
// padStart, padEnd, the Array, ArrayBuffer and typed array constructors,
// Array.from, fill, join) refuse sizes past a share of the limit with a
// RangeError first. The watch reads
// the whole process's heap, so concurrent runs share the headroom. The
// limits hold in async code too: a loop in an async function, a microtask
// loop (for (;;) await null) and a promise that never settles all end at
// the timeout, or at the memory limit, reported as such.
// Console output is kept up to a bound, with a note when it was cut.
//
// # Worker processes
//
// Run runs a script in the calling process. A Pool runs each script in a
// worker process of its own instead (Pool.Run has Run's signature): a
// child started with WorkerArg (by default this executable, whose main
// calls WorkerMain), warmed up, sandboxed where the platform allows
// (no_new_privs, Landlock, seccomp, root given up, rlimits: see
// docs/codemode.md), and used for one script. The worker applies the
// limits above itself; the operating system holds its data segment to
// the memory bound plus 40 MiB (RLIMIT_DATA, Linux) and the server kills
// it once its resident memory has grown past the bound since the script
// started, or past its time. Tools run in the server, which
// applies the bridge rule before the worker sees a result. A worker that
// dies is the run's Error (kind "worker", or "memory" when the operating
// system refused it memory), never the server's.
package codemode
