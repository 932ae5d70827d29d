package codemode

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
	"github.com/dop251/goja/token"
	"github.com/evanw/esbuild/pkg/api"
)

// scriptName names the script in goja's stack traces and in the source map,
// so that a frame of the model's code can be told from the runtime's own.
const scriptName = "code.ts"

// The code is wrapped on lines of its own, so that only line numbers need
// adjusting: the script's line n is the wrapped source's line n+1.
const (
	wrapHead = "(async function() {\n"
	wrapTail = "\n})"
)

// transformOptions turn TypeScript (or plain JavaScript, which is valid
// TypeScript) into JavaScript goja runs. goja has async functions, classes,
// optional chaining and the rest of ES2020 that models write, but not
// async generators, for await, decorators or using: esbuild lowers those
// (using needs Symbol.dispose, which the prelude adds). Its source map
// maps each position goja reports (a stack frame, an error's stack, a
// syntax error) back to the code as written (sourceMap).
var transformOptions = api.TransformOptions{
	Loader:         api.LoaderTS,
	Target:         api.ESNext,
	Supported:      map[string]bool{"async-generator": false, "for-await": false, "decorators": false, "using": false},
	Sourcemap:      api.SourceMapExternal,
	SourcesContent: api.SourcesContentExclude,
	Sourcefile:     scriptName,
	LogLevel:       api.LogLevelSilent,
}

// Compile checks that code (JavaScript or TypeScript) parses as the body of
// an async function, as Run would run it. The error is an *Error of kind
// syntax, with the line and column in code.
func Compile(code string) error {
	_, _, err := compile(code)
	if err != nil {
		return err
	}
	return nil
}

// compile transpiles code, wrapped as an async function, and compiles the
// result for goja.
func compile(code string) (*goja.Program, *sourceMap, *Error) {
	js, m, e := transpile(code)
	if e != nil {
		return nil, nil, e
	}
	// at sets e's line and column to those of a position in js (column
	// 1-based, in bytes) in the code as written.
	at := func(e *Error, line, column int) {
		if p, ok := m.original(line, column-1); ok {
			e.Line, e.Column = userLine(p.line, code), p.column+1
		}
	}
	prg, err := parser.ParseFile(nil, scriptName, js, 0)
	if err != nil {
		// esbuild accepted it: this is something goja lacks.
		e := &Error{Kind: "syntax", Err: ErrSyntax, Message: err.Error()}
		var list parser.ErrorList
		var one *parser.Error
		switch {
		case errors.As(err, &list) && len(list) > 0:
			e.Message = list[0].Message
			at(e, list[0].Position.Line, list[0].Position.Column)
		case errors.As(err, &one):
			e.Message = one.Message
			at(e, one.Position.Line, one.Position.Column)
		}
		e.Message = "SyntaxError: " + e.Message + " (Code Mode's JavaScript engine does not support this construct; write it another way)"
		moduleError(e, code)
		return nil, nil, e
	}
	if stray := strayStatement(prg); stray != nil {
		e := &Error{Kind: "syntax", Err: ErrSyntax,
			Message: "SyntaxError: the code closes the function it runs in (an unbalanced '}'); write the body of a function, ending with return"}
		p := prg.File.Position(int(stray.Idx0()) - prg.File.Base())
		at(e, p.Line, p.Column)
		return nil, nil, e
	}
	walkAST(reflect.ValueOf(prg), func(node any) {
		markLoop(node)
		promisedCall(node)
	})
	p, err := goja.CompileAST(prg, false)
	if err != nil {
		e := &Error{Kind: "syntax", Err: ErrSyntax, Message: "SyntaxError: " + err.Error()}
		var ce *goja.CompilerSyntaxError
		if errors.As(err, &ce) {
			e.Message = "SyntaxError: " + ce.Message
			if ce.File != nil {
				pos := ce.File.Position(ce.Offset)
				at(e, pos.Line, pos.Column)
			}
		}
		return nil, nil, e
	}
	return p, m, nil
}

// transpile turns code into JavaScript wrapped as an async function, with
// a source map back to the wrapped code.
func transpile(code string) (string, *sourceMap, *Error) {
	out := api.Transform(wrapHead+code+wrapTail, transformOptions)
	if len(out.Errors) > 0 {
		m := out.Errors[0]
		e := &Error{Kind: "syntax", Err: ErrSyntax, Message: "SyntaxError: " + m.Text}
		lines := jsLines(wrapHead + code + wrapTail)
		if l := m.Location; l != nil {
			p, _ := nlPos(lines, l.Line-1, columnOf(l.LineText, l.Column)-1)
			e.Line = userLine(p.line, code)
			if p.line >= 2 { // on the wrapper's lines, the column means nothing to the model
				e.Column = p.column + 1
			}
			if l.Line >= len(lines) { // the wrapper's closing line
				endedEarly(e, m, code, lines)
			}
		}
		if len(out.Errors) > 1 {
			e.Message += " (and " + strconv.Itoa(len(out.Errors)-1) + " more errors)"
		}
		moduleError(e, code)
		return "", nil, e
	}
	return string(out.Code), parseSourceMap(out.Map, string(out.Code), wrapHead+code+wrapTail), nil
}

// endedEarly rewrites e, esbuild's error m found on the wrapper's closing
// line: the code ended before a template, string, comment or bracket was
// closed, or inside an expression, and esbuild read on into the "})"
// the model never wrote. The error is put at the end of the script as
// written (its last line with text), esbuild's words kept unless they
// blame the wrapper's "}" or ")", and where a note of esbuild's points
// into the script (where an unclosed comment starts), that is said too.
func endedEarly(e *Error, m api.Message, code string, wrapped []jsLine) {
	lines := strings.Split(code, "\n")
	e.Line, e.Column = len(lines), 1
	for i := len(lines) - 1; i >= 0; i-- {
		if text := strings.TrimRightFunc(lines[i], unicode.IsSpace); text != "" {
			e.Line, e.Column = i+1, utf8.RuneCountInString(text)+1
			break
		}
	}
	e.Message = "SyntaxError: unexpected end of the script: an expression is unfinished, or a bracket, string, template literal or comment is not closed"
	if !strings.HasPrefix(m.Text, "Unexpected ") {
		e.Message += " (" + m.Text + ")"
	}
	for _, n := range m.Notes {
		if l := n.Location; l != nil {
			if p, ok := nlPos(wrapped, l.Line-1, columnOf(l.LineText, l.Column)-1); ok && p.line >= 2 && p.line <= len(lines)+1 {
				e.Message += fmt.Sprintf("; %s line %d, column %d", strings.TrimSpace(n.Text), p.line-1, p.column+1)
			}
		}
	}
}

// moduleError gives a syntax error on a line that imports or exports
// (import ... from, import(...), import.meta, export) the reason: there
// are no modules.
func moduleError(e *Error, code string) {
	lines := strings.Split(code, "\n")
	if e.Line < 1 || e.Line > len(lines) {
		return
	}
	if importOrExport().MatchString(lines[e.Line-1]) {
		e.Message = "SyntaxError: import and export are not available: a script is the body of one async function, with no modules; call the tools as tools.NAME(...) and write the rest in the script"
	}
}

// importOrExport matches a line with an import or export statement, or
// a dynamic import or import.meta.
var importOrExport = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(import|export)\b|\bimport\s*(\(|\.\s*meta\b)`)
})

// columnOf turns esbuild's 0-based byte column into a 1-based character
// column.
func columnOf(line string, byteCol int) int {
	byteCol = min(max(byteCol, 0), len(line))
	return utf8.RuneCountInString(line[:byteCol]) + 1
}

// strayStatement returns the first statement of the program that is
// neither the wrapper function nor one of the helpers esbuild adds before
// it for what it lowers (var __name = ...); nil when there is none. Code
// with an extra '}' closes the wrapper and leaves such statements behind.
func strayStatement(prg *ast.Program) ast.Statement {
	wrapper := false
	for _, s := range prg.Body {
		if !wrapper && isWrapper(s) {
			wrapper = true
			continue
		}
		if vs, ok := s.(*ast.VariableStatement); ok && !wrapper && helpers(vs) {
			continue
		}
		return s
	}
	return nil
}

// helpers reports whether every name a var statement declares is one of
// esbuild's (__forAwait, __knownSymbol, ...).
func helpers(vs *ast.VariableStatement) bool {
	for _, b := range vs.List {
		id, ok := b.Target.(*ast.Identifier)
		if !ok || !strings.HasPrefix(string(id.Name), "__") {
			return false
		}
	}
	return true
}

func isWrapper(s ast.Statement) bool {
	es, ok := s.(*ast.ExpressionStatement)
	if !ok {
		return false
	}
	fn, ok := es.Expression.(*ast.FunctionLiteral)
	return ok && fn.Async
}

// userLine maps a line of the wrapped source to the script's own line,
// clamped to the script's lines (an error at the wrapper's closing line is
// reported at the script's last line).
func userLine(line int, code string) int {
	if line == 0 {
		return 0
	}
	n := strings.Count(code, "\n") + 1
	return min(max(line-1, 1), n)
}

// stackFrame finds the frames of the script in an Error's stack
// property, as goja writes it ("\tat f (code.ts:3:9(12))"), at positions
// in the JavaScript esbuild made.
// It is compiled on first use, not at start-up.
var stackFrame = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(scriptName) + `:(\d+):(\d+)`)
})

// wrappedPos is a position in the wrapped source, as sourceMap gives it:
// line 1-based, column 0-based in characters.
type wrappedPos struct{ line, column int }

// stackPositions returns the positions of the script's frames in an
// Error's stack, innermost first, in the wrapped source.
func stackPositions(stack string, m *sourceMap) []wrappedPos {
	var at []wrappedPos
	for _, f := range stackFrame().FindAllStringSubmatch(stack, -1) {
		line, _ := strconv.Atoi(f[1])
		column, _ := strconv.Atoi(f[2])
		p, _ := m.original(line, column-1) // unmapped: {0, 0}, no line of the script
		at = append(at, p)
	}
	return at
}

// scriptPosition returns the script's line and column (both 1-based) of
// the first of the script's frames, innermost first, that is on a line of
// the script; 0, 0 when none is. goja gives a frame it has no position for
// (a loop with an empty body, a promise job resuming the script between
// awaits) the wrapper's own first line (code.ts:1:1): that is no line of
// the script, and "line 1" would point the model at a line that may have
// done nothing. Without a frame on the script's lines, a one-line script
// still stopped on its line 1 (at no known column, 0).
func scriptPosition(at []wrappedPos, oneLine bool) (line, column int) {
	for _, p := range at {
		if p.line >= 2 {
			return p.line - 1, p.column + 1
		}
	}
	if len(at) > 0 && oneLine {
		return 1, 0
	}
	return 0, 0
}

// markLoop gives each loop whose test is constant or absent (while
// (true), for (;;)) a position of its own on every turn (and each null or
// undefined literal used as a receiver one, markedNullish): a
// `typeof loopMark;` at the loop's start, before its body. goja compiles
// such a loop with an empty body (or a body of awaits) to jumps with no
// position, and a script stopped there (by its timeout) was said to have
// stopped at the last statement before the loop that had one, a line that
// had done nothing wrong. typeof of a name nothing declares never throws
// (`this` would, before super() in a derived class's constructor), and
// costs next to nothing.
func markLoop(node any) {
	switch n := node.(type) {
	case *ast.DotExpression:
		n.Left = markedNullish(n.Left)
	case *ast.BracketExpression:
		n.Left = markedNullish(n.Left)
	case *ast.WhileStatement:
		if constantTest(n.Test) {
			n.Body = marked(n.While, n.Body)
		}
	case *ast.DoWhileStatement:
		if constantTest(n.Test) {
			n.Body = marked(n.Do, n.Body)
		}
	case *ast.ForStatement:
		if constantTest(n.Test) {
			n.Body = marked(n.For, n.Body)
		}
	}
}

// walkAST calls visit with each node of goja's syntax tree under v (the
// pointer to a node), a node before its children, and walks the children
// as visit left them: visit may rewrite them. compile walks the tree once,
// with every rewrite it makes.
func walkAST(v reflect.Value, visit func(node any)) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || v.Elem().Kind() != reflect.Struct || v.Elem().Type().PkgPath() != astPkg {
			return
		}
		visit(v.Interface())
		walkAST(v.Elem(), visit)
	case reflect.Interface:
		walkAST(v.Elem(), visit)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			walkAST(v.Field(i), visit)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			walkAST(v.Index(i), visit)
		}
	}
}

// markedNullish gives left, when it is the literal null or undefined
// (which esbuild writes as void 0), a position of its own: a `typeof
// loopMark` at it, evaluated first. goja gives a method call or an
// assignment on such a receiver no position, and the TypeError it throws
// was said to be at the last step before it that had one, often the
// statement before. Anything else is returned as it is.
func markedNullish(left ast.Expression) ast.Expression {
	switch l := left.(type) {
	case *ast.NullLiteral:
	case *ast.UnaryExpression:
		if l.Operator != token.VOID {
			return left
		}
	default:
		return left
	}
	at := left.Idx0()
	mark := &ast.UnaryExpression{Operator: token.TYPEOF, Idx: at, Operand: &ast.Identifier{Idx: at, Name: loopMark}}
	return &ast.SequenceExpression{Sequence: []ast.Expression{mark, left}}
}

// astPkg is the package of goja's syntax tree: walkAST walks its nodes
// only (not the source file and its map).
var astPkg = reflect.TypeFor[ast.Program]().PkgPath()

// constantTest reports whether a loop's test is absent or a literal.
func constantTest(e ast.Expression) bool {
	switch e.(type) {
	case nil, *ast.BooleanLiteral, *ast.NumberLiteral, *ast.StringLiteral:
		return true
	}
	return false
}

// loopMark is the name markLoop reads: one no script declares.
const loopMark = "__scrollback_loop_mark"

// marked is body after a `this;` at at.
func marked(at file.Idx, body ast.Statement) ast.Statement {
	mark := &ast.ExpressionStatement{Expression: &ast.UnaryExpression{Operator: token.TYPEOF, Idx: at,
		Operand: &ast.Identifier{Idx: at, Name: loopMark}}}
	return &ast.BlockStatement{LeftBrace: at, List: []ast.Statement{mark, body}, RightBrace: body.Idx1()}
}

// promisedName is the global function that calls a tool as a
// promise-returning function would run (the prelude's promised):
// __scrollback_promised(tools, "x", ...args) gives a promise of the
// result, rejected when the call fails.
const promisedName = "__scrollback_promised"

// promisedCall makes the tool calls whose promise the script handles
// call the tool through promisedName: tools.x(...) followed by .then,
// .catch or .finally, and tools.x(...) as an element of an array given
// to Promise.all, allSettled, any or race. A tool call is made at once
// and throws when it fails (so that a call not awaited still stops the
// script where it is made, as await would); there, the throw came before
// the handler the script wrote for it could be reached. Other calls are
// left as they are. (Where the script has a tools of its own, its method
// is called the same way, its result given as a promise, which is what
// .then and Promise.all make of it anyway.)
func promisedCall(node any) {
	c, ok := node.(*ast.CallExpression)
	if !ok {
		return
	}
	d, ok := c.Callee.(*ast.DotExpression)
	if !ok {
		return
	}
	switch d.Identifier.Name {
	case "then", "catch", "finally":
		promise(d.Left)
	case "all", "allSettled", "any", "race":
		if p, ok := d.Left.(*ast.Identifier); ok && p.Name == "Promise" && len(c.ArgumentList) > 0 {
			if a, ok := c.ArgumentList[0].(*ast.ArrayLiteral); ok {
				for _, e := range a.Value {
					promise(e)
				}
			}
		}
	}
}

// promise rewrites e, when it is a call tools.x(args) or tools[k](args),
// as __scrollback_promised(tools, "x", args) (or k).
func promise(e ast.Expression) {
	c, ok := e.(*ast.CallExpression)
	if !ok {
		return
	}
	var left, key ast.Expression
	switch callee := c.Callee.(type) {
	case *ast.DotExpression:
		left = callee.Left
		key = &ast.StringLiteral{Idx: callee.Identifier.Idx, Literal: strconv.Quote(string(callee.Identifier.Name)), Value: callee.Identifier.Name}
	case *ast.BracketExpression:
		left, key = callee.Left, callee.Member
	default:
		return
	}
	if id, ok := left.(*ast.Identifier); !ok || id.Name != "tools" {
		return
	}
	c.Callee = &ast.Identifier{Name: promisedName, Idx: left.Idx0()}
	c.ArgumentList = append([]ast.Expression{left, key}, c.ArgumentList...)
}
