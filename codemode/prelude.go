package codemode

import (
	"errors"
	"sync"

	"github.com/dop251/goja"
)

// preludeSource adds, to a fresh runtime, the built-ins models reach for
// that goja lacks (each only where missing), and returns the then method
// the bridge gives each tool result.
//
// Tool results are plain values, so that tools.x({}).preview works as
// before; each object result also carries a non-enumerable then, so that
// await tools.x({}), Promise.all([...]) and tools.x({}).then(f) work too.
// then removes itself before resolving, so the value the script gets is
// the plain object (a value that stayed thenable would be resolved again,
// forever).
const preludeSource = `(function(JSONparse, JSONstringify) {
"use strict";
const G = globalThis, {Date, RegExp, ArrayBuffer, Map, Set, WeakMap, WeakSet, Error} = G, P = Promise, PT = P.prototype.then, PF = P.prototype.finally, RA = Reflect.apply, RD = Reflect.deleteProperty;
const def = (o, name, fn) => {
	if (Object.prototype.hasOwnProperty.call(o, name)) return;
	Object.defineProperty(o, name, {value: fn, writable: true, configurable: true, enumerable: false});
};
const key = k => typeof k === "symbol" ? k : String(k);
def(Object, "groupBy", function groupBy(items, keyOf) {
	if (typeof keyOf !== "function") throw new TypeError("Object.groupBy: the second argument must be a function");
	const out = Object.create(null);
	let i = 0;
	for (const v of items) {
		const k = key(keyOf(v, i++));
		if (Object.prototype.hasOwnProperty.call(out, k)) out[k].push(v); else out[k] = [v];
	}
	return out;
});
def(Map, "groupBy", function groupBy(items, keyOf) {
	if (typeof keyOf !== "function") throw new TypeError("Map.groupBy: the second argument must be a function");
	const out = new Map();
	let i = 0;
	for (const v of items) {
		const k = keyOf(v, i++), g = out.get(k);
		if (g) g.push(v); else out.set(k, [v]);
	}
	return out;
});
def(P, "withResolvers", function withResolvers() {
	let resolve, reject;
	const promise = new this((a, b) => { resolve = a; reject = b; });
	return {promise, resolve, reject};
});
// using and await using (esbuild lowers them) look these up; esbuild's
// helpers fall back to the same registered symbols.
for (const name of ["dispose", "asyncDispose"]) if (!(name in Symbol)) Object.defineProperty(Symbol, name, {value: Symbol.for("Symbol." + name)});
def(G, "queueMicrotask", function queueMicrotask(fn) {
	if (typeof fn !== "function") throw new TypeError("queueMicrotask: the argument must be a function");
	RA(PT, P.resolve(), [() => fn()]);
});
const uncloneable = v => new TypeError("structuredClone: " + (typeof v === "object" ? Object.prototype.toString.call(v) : typeof v) + " could not be cloned");
def(G, "structuredClone", function structuredClone(value) {
	const seen = new Map();
	const clone = v => {
		if (typeof v === "function" || typeof v === "symbol") throw uncloneable(v);
		if (v === null || typeof v !== "object") return v;
		if (seen.has(v)) return seen.get(v);
		let out;
		if (Array.isArray(v)) {
			out = [];
			seen.set(v, out);
			for (let i = 0; i < v.length; i++) out[i] = clone(v[i]);
			return out;
		}
		if (v instanceof Date) out = new Date(v.getTime());
		else if (v instanceof RegExp) out = new RegExp(v.source, v.flags);
		else if (v instanceof ArrayBuffer) out = v.slice(0);
		else if (ArrayBuffer.isView(v)) out = new v.constructor(v);
		else if (v instanceof Error) {
			const C = {EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError}[v.name] || Error;
			out = new C(v.message);
			if ("stack" in v) out.stack = v.stack;
		} else if (v instanceof Map) {
			out = new Map();
			seen.set(v, out);
			for (const [k, x] of v) out.set(clone(k), clone(x));
			return out;
		} else if (v instanceof Set) {
			out = new Set();
			seen.set(v, out);
			for (const x of v) out.add(clone(x));
			return out;
		} else if (v instanceof P || v instanceof WeakMap || v instanceof WeakSet) throw uncloneable(v);
		if (out !== undefined) {
			seen.set(v, out);
			return out;
		}
		out = {};
		seen.set(v, out);
		for (const k of Object.keys(v)) out[k] = clone(v[k]);
		return out;
	};
	return clone(value);
});
// JSON.parse of a preview (r.preview of a result that was cut) fails
// where scrollback's footer stands; the error says so, and where the
// whole text is.
// (What the prelude runs later is taken now: the script may replace
// built-ins.)
const origReplace = String.prototype.replace, parse = G.JSON.parse, cutPreview = /\[\.\.\. [^\n]*not shown[\s\S]*?\b(out_[A-Za-z0-9]+)/, reExec = RegExp.prototype.exec,
	defProp = Object.defineProperty, hasOwn = Object.prototype.hasOwnProperty, arrayFrom = Array.from, keys = Object.keys, isSafe = Number.isSafeInteger;
Object.defineProperty(G.JSON, "parse", {writable: true, configurable: true, enumerable: false, value: function parse_(...args) {
	try {
		return RA(parse, G.JSON, args);
	} catch (e) {
		const m = typeof args[0] === "string" && e instanceof SyntaxError && RA(reExec, cutPreview, [args[0]]);
		if (!m) throw e;
		throw new SyntaxError(e.message + "; the text is a preview that scrollback cut (its footer stands where the rest was left out), not the whole output: query the whole copy with tools.query_tool_output({id: \"" + m[1] + "\", filter: \".\"}) (a jq filter), or read all of it with tools.read_tool_output({id: \"" + m[1] + "\"}) following nextOffset");
	}
}});
Object.defineProperty(G.JSON.parse, "name", {value: "parse"});
// goja parses named groups, (?<y>\d+), but gives a match no groups:
// exec (which match and matchAll call) adds them, and replace and
// replaceAll turn $<y> into $1 and pass a replacer function the groups.
const groupNames = src => {
	if (src.indexOf("(?<") < 0) return null;
	const names = [];
	let named = false, cls = false;
	for (let i = 0; i < src.length; i++) {
		const c = src[i];
		if (c === "\\") { i++; continue; }
		if (cls) { if (c === "]") cls = false; continue; }
		if (c === "[") { cls = true; continue; }
		if (c !== "(") continue;
		if (src[i + 1] !== "?") { names.push(undefined); continue; }
		if (src[i + 2] === "<" && src[i + 3] !== "=" && src[i + 3] !== "!") {
			names.push(src.slice(i + 3, src.indexOf(">", i + 3)));
			named = true;
		}
	}
	return named ? names : null;
};
const groupsOf = (names, caps) => {
	const g = Object.create(null);
	for (let i = 0; i < names.length; i++) if (names[i] !== undefined) g[names[i]] = caps[i + 1];
	return g;
};
defProp(RegExp.prototype, "exec", {writable: true, configurable: true, enumerable: false, value: function exec(s) {
	const r = RA(reExec, this, [s]);
	if (r !== null && r.groups === undefined) {
		const names = groupNames(this.source);
		if (names) r.groups = groupsOf(names, r);
	}
	return r;
}});
for (const m of ["replace", "replaceAll"]) {
	const orig = String.prototype[m];
	defProp(String.prototype, m, {writable: true, configurable: true, enumerable: false, value: {[m](pattern, replacement) {
		const names = pattern instanceof RegExp ? groupNames(pattern.source) : null;
		if (names && typeof replacement === "string" && replacement.indexOf("$<") >= 0) {
			replacement = RA(orig, replacement, [/\$<([^>]*)>/g, (all, n) => { const i = names.indexOf(n); return i < 0 ? "" : "$" + (i + 1); }]);
		} else if (names && typeof replacement === "function") {
			const f = replacement;
			replacement = function(...a) { return RA(f, this, [...a, groupsOf(names, a)]); };
		}
		return RA(orig, this, [pattern, replacement]);
	}}[m]});
}
// goja has no Intl, and its toLocaleString takes the locale for a radix:
// en-US grouping, the one locale models ask for, is done here; any other
// is refused rather than formatted wrongly.
const toFixed = Number.prototype.toFixed;
defProp(Number.prototype, "toLocaleString", {writable: true, configurable: true, enumerable: false, value: function toLocaleString(locales, options) {
	const x = Number(this), loc = Array.isArray(locales) ? locales[0] : locales;
	if (loc !== undefined && loc !== "en-US" && loc !== "en") throw new RangeError("toLocaleString: Code Mode has no Intl; it formats numbers for en-US only (or format the number yourself)");
	const o = options || {};
	for (const k of keys(o)) if (k !== "minimumFractionDigits" && k !== "maximumFractionDigits") throw new RangeError("toLocaleString: Code Mode has no Intl; of the options it takes only minimumFractionDigits and maximumFractionDigits");
	if (x !== x) return "NaN";
	if (x === Infinity || x === -Infinity) return (x < 0 ? "-" : "") + "∞";
	const minFD = o.minimumFractionDigits === undefined ? 0 : Number(o.minimumFractionDigits);
	const maxFD = o.maximumFractionDigits === undefined ? Math.max(minFD, 3) : Number(o.maximumFractionDigits);
	if (!(minFD >= 0 && minFD <= 100 && maxFD >= minFD && maxFD <= 100)) throw new RangeError("toLocaleString: fraction digits must be from 0 to 100, minimum at most maximum");
	const ax = Math.abs(x);
	let [int, frac = ""] = ax >= 1e21 ? [BI(ax).toString()] : RA(toFixed, ax, [maxFD]).split(".");
	while (frac.length > minFD && frac.endsWith("0")) frac = frac.slice(0, -1);
	int = RA(origReplace, int, [/\B(?=(\d{3})+(?!\d))/g, ","]);
	const out = int + (frac ? "." + frac : "");
	return (x < 0 && /[1-9]/.test(out) ? "-" : "") + out;
}});
const then = function then(onFulfilled, onRejected) {
	let v = this;
	// A frozen result cannot lose its then: resolve with a plain copy.
	if (!RD(v, "then")) v = JSONparse(JSONstringify(v));
	if (v.catch === catch_) RD(v, "catch");
	if (v.finally === finally_) RD(v, "finally");
	return RA(PT, new P(resolve => resolve(v)), [onFulfilled, onRejected]);
};
// The tools are declared to return promises, so a result has a promise's
// catch and finally beside then (non-enumerable, removed with then).
const catch_ = function catch_(onRejected) { return RA(then, this, [undefined, onRejected]); };
Object.defineProperty(catch_, "name", {value: "catch"});
const finally_ = function finally_(onFinally) { return RA(PF, RA(then, this, []), [onFinally]); };
Object.defineProperty(finally_, "name", {value: "finally"});
// promised(obj, key, ...args) calls obj[key](...args) as a
// promise-returning function would run: what it throws becomes a
// rejected promise. The compiler calls a tool through it (as
// __scrollback_promised) where the call is followed by .then, .catch or
// .finally, or is an element of Promise.all([...]) and its kin, so that
// a failing call reaches the script's handler (a call the script does not
// handle throws where it is made, as await would).
const promised = function promised(obj, key, ...args) {
	let v;
	try {
		v = RA(obj[key], obj, args);
	} catch (e) {
		return P.reject(e);
	}
	return P.resolve(v);
};
// JSON for what the run shows (the return value, console output): a Map
// as an object (an array of entries when a key is not a string or a
// number), a Set as an array, a BigInt as a number when exact, else its
// digits, an Error as its name, message and fields, rather than {} (which
// reads as empty) or a TypeError. Each
// toJSON is lent only while the value is turned into JSON, and only where
// the script has not given one itself.
const BI = BigInt, toStr = BI.prototype.toString;
const lent = [
	Map.prototype, function toJSON() {
		const o = {};
		for (const [k, x] of this) {
			if (typeof k !== "string" && typeof k !== "number") return arrayFrom(this);
			defProp(o, k, {value: x, enumerable: true, writable: true, configurable: true});
		}
		return o;
	},
	Set.prototype, function toJSON() { return arrayFrom(this); },
	// An Error's name and message (and cause) are not enumerable.
	Error.prototype, function toJSON() {
		const o = {name: this.name, message: this.message};
		if (RA(hasOwn, this, ["cause"])) o.cause = this.cause;
		for (const k of keys(this)) o[k] = this[k];
		return o;
	},
	// (goja's Number() of a BigInt past 64 bits is wrong: compare first.)
	BI.prototype, function toJSON() { return this >= -9007199254740991n && this <= 9007199254740991n ? Number(this) : RA(toStr, this, []); },
];
const shown = function shown(v) {
	const added = [];
	let n = 0;
	try {
		for (let i = 0; i < lent.length; i += 2) {
			if (RA(hasOwn, lent[i], ["toJSON"])) continue;
			defProp(lent[i], "toJSON", {value: lent[i + 1], writable: true, configurable: true, enumerable: false});
			added[n++] = lent[i];
		}
		return JSONstringify(v);
	} finally {
		for (let i = 0; i < n; i++) RD(added[i], "toJSON");
	}
};
return [then, shown, catch_, finally_, promised];
})`

var (
	preludeOnce sync.Once
	preludePrg  *goja.Program
	preludeErr  error
)

// preludeFuncs are what the prelude gives the run: then, catch and
// finally for tool results (thenable), shown (JSON.stringify with a JSON
// form for Map, Set and BigInt, for what the run shows) and promised,
// which calls a tool as a promise-returning function (promisedCall).
type preludeFuncs struct {
	then, catch, finally goja.Value
	shown                goja.Callable
	promised             goja.Value
}

// prelude installs the polyfills in vm and returns its functions.
func prelude(vm *goja.Runtime, parse, stringify goja.Value) (preludeFuncs, error) {
	preludeOnce.Do(func() { preludePrg, preludeErr = goja.Compile("prelude.js", preludeSource, true) })
	if preludeErr != nil {
		return preludeFuncs{}, preludeErr
	}
	v, err := vm.RunProgram(preludePrg)
	if err != nil {
		return preludeFuncs{}, err
	}
	fn, _ := goja.AssertFunction(v)
	list, err := fn(goja.Undefined(), parse, stringify)
	if err != nil {
		return preludeFuncs{}, err
	}
	o := list.ToObject(vm)
	f := preludeFuncs{then: o.Get("0"), catch: o.Get("2"), finally: o.Get("3"), promised: o.Get("4")}
	var ok1 bool
	f.shown, ok1 = goja.AssertFunction(o.Get("1"))
	if _, ok2 := goja.AssertFunction(f.promised); !ok1 || !ok2 {
		return preludeFuncs{}, errors.New("prelude: a function is missing")
	}
	return f, nil
}
