package codemode

import (
	"sync"

	"github.com/dop251/goja"
)

// guardSource wraps the built-ins that can allocate a huge block in one
// native step, which the memory sampler cannot interrupt: they refuse sizes
// past maxLen elements (arrays) or maxChars characters (strings), or
// maxBytes (buffers), with a RangeError the script may catch.
const guardSource = `(function(maxLen, maxChars, maxBytes) {
"use strict";
const RE = RangeError, P = Proxy, RC = Reflect.construct, RA = Reflect.apply, G = globalThis;
const def = (o, name, fn) => Object.defineProperty(o, name, {value: fn, writable: true, configurable: true, enumerable: false});
const over = (what, n, max, unit) => new RE(what + " would make " + n + " " + unit + ", over Code Mode's limit of " + max);
const wrapString = (name, size) => {
	const orig = String.prototype[name];
	def(String.prototype, name, {[name](...a) {
		const n = size(String(this).length, a);
		if (n > maxChars) throw over("String.prototype." + name, n, maxChars, "characters");
		return RA(orig, this, a);
	}}[name]);
};
wrapString("repeat", (len, a) => len * (Number(a[0]) || 0));
wrapString("padStart", (len, a) => Number(a[0]) || 0);
wrapString("padEnd", (len, a) => Number(a[0]) || 0);
const wrapLength = (proto, name, unit) => {
	const orig = proto[name];
	def(proto, name, {[name](...a) {
		const n = Number(this.length) || 0;
		if (n > maxLen) throw over("Array.prototype." + name + " on " + n + " elements", n, maxLen, unit);
		return RA(orig, this, a);
	}}[name]);
};
wrapLength(Array.prototype, "fill", "elements");
wrapLength(Array.prototype, "join", "elements");
const ctor = (name, check) => {
	const C = G[name];
	if (typeof C !== "function") return;
	// goja's instanceof does not see through a Proxy: answer it for the
	// target, so that [] instanceof Array stays true.
	const hasInstance = {[Symbol.hasInstance](v) { return v instanceof C; }}[Symbol.hasInstance];
	const p = new P(C, {
		construct(t, a, nt) { check(a); return RC(t, a, nt === p ? t : nt); },
		apply(t, th, a) { check(a); return RA(t, th, a); },
		get(t, k, r) { return k === Symbol.hasInstance ? hasInstance : Reflect.get(t, k, r); },
	});
	def(G, name, p);
};
const arrayCheck = a => { if (a.length === 1 && typeof a[0] === "number" && a[0] > maxLen) throw over("new Array(" + a[0] + ")", a[0], maxLen, "elements"); };
ctor("Array", arrayCheck);
const from = Array.from;
def(Array, "from", function from_(src, ...rest) {
	const n = src != null ? Number(src.length) || 0 : 0;
	if (n > maxLen) throw over("Array.from", n, maxLen, "elements");
	return RA(from, this, [src, ...rest]);
});
const bufCheck = (name, size) => a => {
	if (a.length >= 1 && typeof a[0] === "number" && a[0] * size > maxBytes) throw over("new " + name + "(" + a[0] + ")", a[0] * size, maxBytes, "bytes");
};
ctor("ArrayBuffer", bufCheck("ArrayBuffer", 1));
ctor("SharedArrayBuffer", bufCheck("SharedArrayBuffer", 1));
for (const [name, size] of [["Int8Array", 1], ["Uint8Array", 1], ["Uint8ClampedArray", 1], ["Int16Array", 2], ["Uint16Array", 2],
	["Int32Array", 4], ["Uint32Array", 4], ["Float32Array", 4], ["Float64Array", 8], ["BigInt64Array", 8], ["BigUint64Array", 8]]) {
	ctor(name, bufCheck(name, size));
}
})`

var (
	guardOnce sync.Once
	guardPrg  *goja.Program
	guardErr  error
)

// guard installs the size checks in vm, scaled to the memory limit (none
// when the limit is off).
func guard(vm *goja.Runtime, maxMemory int64) error {
	if maxMemory < 0 {
		return nil
	}
	guardOnce.Do(func() { guardPrg, guardErr = goja.Compile("guard.js", guardSource, true) })
	if guardErr != nil {
		return guardErr
	}
	v, err := vm.RunProgram(guardPrg)
	if err != nil {
		return err
	}
	fn, _ := goja.AssertFunction(v)
	// An array element costs at least 16 bytes (an interface value), a
	// string character up to 2 (UTF-16); leave room for copies.
	_, err = fn(goja.Undefined(), vm.ToValue(maxMemory/32), vm.ToValue(maxMemory/4), vm.ToValue(maxMemory/2))
	return err
}
