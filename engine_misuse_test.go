package scrollback_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// TestEngineWithoutStore: an engine made without a store (nil, or the nil
// *sqlite.DB a failed Open returns), a zero Engine and a Session not got
// from an engine do not panic: every call that needs a store returns an
// *Error of kind unavailable that says how to make one, and an engine
// without a store still reads files, as `scrollback read` uses it.
func TestEngineWithoutStore(t *testing.T) {
	ctx := context.Background()
	var failedOpen *sqlite.DB // what sqlite.Open returns with its error
	engines := map[string]*scrollback.Engine{
		"New(nil)":     scrollback.New(nil, scrollback.Options{}),
		"New(nil *DB)": scrollback.New(failedOpen, scrollback.Options{}),
		"zero Engine":  new(scrollback.Engine),
		"nil Engine":   nil,
	}
	for name, eng := range engines {
		t.Run(name, func(t *testing.T) {
			calls := map[string]func() error{
				"NewSession":     func() error { _, err := eng.NewSession(ctx, scrollback.LocalOwner); return err },
				"DefaultSession": func() error { _, err := eng.DefaultSession(ctx, scrollback.LocalOwner); return err },
				"Session":        func() error { _, err := eng.Session(ctx, scrollback.LocalOwner, "s_x"); return err },
				"ListSessions":   func() error { _, err := eng.ListSessions(ctx, scrollback.LocalOwner); return err },
				"CopySession":    func() error { _, err := eng.CopySession(ctx, scrollback.LocalOwner, "out_x"); return err },
				"ForkSession":    func() error { _, err := eng.ForkSession(ctx, scrollback.LocalOwner, "s_x"); return err },
				"DeleteSession":  func() error { return eng.DeleteSession(ctx, scrollback.LocalOwner, "s_x") },
			}
			if name != "New(nil)" && name != "New(nil *DB)" {
				calls["ReadFile"] = func() error {
					_, err := eng.ReadFile(ctx, scrollback.ReadFileInput{Path: "doc.go"})
					return err
				}
			}
			for call, f := range calls {
				err := noPanic(t, call, f)
				checkNoStoreError(t, call, err)
			}
		})
	}

	// Reading a file needs no store.
	p, err := scrollback.New(nil, scrollback.Options{}).ReadFile(ctx, scrollback.ReadFileInput{Path: "doc.go", Limit: 1})
	if err != nil || !strings.HasPrefix(p.Text, "// Package scrollback") {
		t.Errorf("ReadFile without a store = %q, %v", p.Text, err)
	}
}

// TestSessionNotFromEngine: a zero or nil *Session returns an error that
// says where sessions come from, instead of a nil pointer panic.
func TestSessionNotFromEngine(t *testing.T) {
	ctx := context.Background()
	for name, s := range map[string]*scrollback.Session{"zero": new(scrollback.Session), "nil": nil} {
		t.Run(name, func(t *testing.T) {
			calls := map[string]func() error{
				"ReadToolOutput": func() error { _, err := s.ReadToolOutput(ctx, scrollback.ReadInput{ID: "out_x"}); return err },
				"GrepToolOutput": func() error {
					_, err := s.GrepToolOutput(ctx, scrollback.GrepInput{ID: "out_x", Pattern: "x"})
					return err
				},
				"QueryToolOutput": func() error {
					_, err := s.QueryToolOutput(ctx, scrollback.QueryInput{ID: "out_x", Filter: "."})
					return err
				},
				"ReadFile": func() error { _, err := s.ReadFile(ctx, scrollback.ReadFileInput{Path: "doc.go"}); return err },
				"Copies":   func() error { _, err := s.Copies(ctx); return err },
				"Cat":      func() error { _, err := s.Cat(ctx, "out_x", io.Discard); return err },
				"RunCode": func() error {
					_, err := s.RunCode(ctx, scrollback.RunCodeInput{Code: "return 1"})
					return err
				},
				"RunCodeOver": func() error {
					_, err := s.RunCodeOver(ctx, scrollback.RunCodeInput{Code: "return 1"}, nil)
					return err
				},
				"RunCommand": func() error {
					_, err := s.RunCommand(ctx, scrollback.RunCommandInput{Command: "true"})
					return err
				},
			}
			for call, f := range calls {
				err := noPanic(t, call, f)
				var se *scrollback.Error
				if !errors.As(err, &se) || !errors.Is(err, scrollback.ErrUnavailable) || !strings.Contains(err.Error(), "NewSession") {
					t.Errorf("%s on a %s Session: %v; want an *Error of kind unavailable that names NewSession", call, name, err)
				}
			}
			// Retain and History return no error: the result is shown,
			// and says it was not kept.
			big := []byte(strings.Repeat("row\n", 20000))
			for call, f := range map[string]func() scrollback.Shown{
				"Retain": func() scrollback.Shown {
					return s.Retain(ctx, scrollback.RetainInput{Tool: "t", Data: big, Complete: true})
				},
				"History": func() scrollback.Shown { return s.History(ctx, "t", "", big) },
			} {
				var sh scrollback.Shown
				noPanic(t, call, func() error { sh = f(); return nil })
				if !sh.Truncated || sh.OutputID != "" || sh.Recovery != scrollback.RecoveryUnavailable || !strings.Contains(sh.Preview, "not saved") {
					t.Errorf("%s on a %s Session: truncated %v id %q recovery %q; preview:\n%s", call, name, sh.Truncated, sh.OutputID, sh.Recovery, sh.Preview)
				}
			}
		})
	}
}

func noPanic(t *testing.T, call string, f func() error) (err error) {
	t.Helper()
	defer func() {
		if v := recover(); v != nil {
			t.Errorf("%s panicked: %v", call, v)
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return f()
}

func checkNoStoreError(t *testing.T, call string, err error) {
	t.Helper()
	var se *scrollback.Error
	if !errors.As(err, &se) || !errors.Is(err, scrollback.ErrUnavailable) || scrollback.ErrorKind(err) != scrollback.KindUnavailable {
		t.Errorf("%s: %v; want an *Error of kind unavailable", call, err)
		return
	}
	if !strings.Contains(err.Error(), "scrollback.New") {
		t.Errorf("%s: %q does not say how to make an engine (scrollback.New)", call, err)
	}
}

// TestSmallBudgetsKeepTheFooter: budgets and a shown size too small to hold
// a footer are raised to MinShownBytes, so that a preview that is not the
// whole result always names the copy that holds the rest.
func TestSmallBudgetsKeepTheFooter(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	data := []byte(strings.Repeat("hello world line\n", 3000))
	for _, o := range []scrollback.Options{{ShownBytes: 10}, {HistoryBudget: 50}, {PreviewBudget: 100}, {PreviewBudget: 60, ShownBytes: 60}} {
		eng := scrollback.New(st, o)
		if got := eng.Options(); got.PreviewBudget < scrollback.MinShownBytes || got.HistoryBudget < scrollback.MinShownBytes || got.ShownBytes < scrollback.MinShownBytes {
			t.Errorf("New(%s).Options() = preview %d, history %d, shown %d; want each at least %d", optionsString(o), got.PreviewBudget, got.HistoryBudget, got.ShownBytes, scrollback.MinShownBytes)
		}
		sess, err := eng.NewSession(ctx, scrollback.LocalOwner)
		if err != nil {
			t.Fatal(err)
		}
		for name, sh := range map[string]scrollback.Shown{
			"History": sess.History(ctx, "t", "t", data),
			"Retain":  sess.Retain(ctx, scrollback.RetainInput{Tool: "t", Data: data, Complete: true}),
			// A caller's own budget too small for a footer is raised too.
			"Retain with Budget 40": sess.Retain(ctx, scrollback.RetainInput{Tool: "t", Data: data, Complete: true, Budget: 40}),
		} {
			if !sh.Truncated || sh.OutputID == "" || !strings.Contains(sh.Preview, sh.OutputID) {
				t.Errorf("%s: %s preview %q does not name its copy %q", optionsString(o), name, sh.Preview, sh.OutputID)
			}
		}
	}
}

func optionsString(o scrollback.Options) string {
	return fmt.Sprintf("{PreviewBudget: %d, HistoryBudget: %d, ShownBytes: %d}", o.PreviewBudget, o.HistoryBudget, o.ShownBytes)
}

// TestConcurrentSessions: one Engine serves many goroutines, some on
// sessions of their own and some sharing one, as an agent running tool
// calls in parallel does. Every copy reads back whole in its own session
// and in no other (run it with -race).
func TestConcurrentSessions(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The query limit is not what this checks: six filters over 30,000
	// documents each, at once, under -race and a loaded machine, ran past
	// the default 5 s and failed the test. The time limit has tests of
	// its own (query_test.go).
	eng := scrollback.New(st, scrollback.Options{QueryTimeout: 10 * time.Minute})
	shared, err := eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	other, err := eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	const workers = 6
	errs := make(chan error, 4*workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := shared
			if i%2 == 1 {
				s, err := eng.NewSession(ctx, scrollback.LocalOwner)
				if err != nil {
					errs <- err
					return
				}
				sess = s
			}
			res, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: fmt.Sprintf("seq %d 30000", i+1)})
			if err != nil || res.Recovery != scrollback.RecoveryAvailable {
				errs <- fmt.Errorf("worker %d: run: %v, recovery %s %s", i, err, res.Recovery, res.RecoveryError)
				return
			}
			var copy strings.Builder
			for off := int64(0); ; {
				p, err := sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: res.OutputID, Offset: off})
				if err != nil {
					errs <- fmt.Errorf("worker %d: read at %d: %v", i, off, err)
					return
				}
				copy.WriteString(p.Text)
				if off = p.NextOffset; !p.HasMore {
					break
				}
			}
			if want := seq(i+1, 30000); copy.String() != want {
				errs <- fmt.Errorf("worker %d: the pages hold %d bytes, want the %d of the output", i, copy.Len(), len(want))
			}
			if g, err := sess.GrepToolOutput(ctx, scrollback.GrepInput{ID: res.OutputID, Pattern: "^29999$"}); err != nil || len(g.Matches) != 1 {
				errs <- fmt.Errorf("worker %d: grep: %+v, %v", i, g, err)
			}
			if q, err := sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: res.OutputID, Filter: "select(. == 30000)"}); err != nil || q.Text != "30000\n" {
				errs <- fmt.Errorf("worker %d: query: %+v, %v", i, q, err)
			}
			if h := sess.History(ctx, "t", "t", []byte(strings.Repeat("x\n", 40000))); h.Recovery != scrollback.RecoveryAvailable {
				errs <- fmt.Errorf("worker %d: history: %s %s", i, h.Recovery, h.RecoveryError)
			}
			if _, err := other.ReadToolOutput(ctx, scrollback.ReadInput{ID: res.OutputID}); !errors.Is(err, scrollback.ErrNoOutput) {
				errs <- fmt.Errorf("worker %d: another session reads the copy: %v", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if cs, err := shared.Copies(ctx); err != nil || len(cs) != 2*((workers+1)/2) {
		t.Errorf("the shared session holds %d copies (%v), want %d", len(cs), err, 2*((workers+1)/2))
	}
}

// seq is what `seq from to` writes.
func seq(from, to int) string {
	var b strings.Builder
	for n := from; n <= to; n++ {
		fmt.Fprintln(&b, n)
	}
	return b.String()
}

// TestNilReceivers calls every exported method of *Engine and *Session on
// a nil pointer and on a zero value: none panics. The calls that act
// return an *Error of kind unavailable; the pure accessors return their
// zero value (CodeTools lists the tools, whose Call returns that error).
// A method added without a case here fails the test.
func TestNilReceivers(t *testing.T) {
	ctx := context.Background()
	big := []byte(strings.Repeat("row\n", 20000))
	type call func(e *scrollback.Engine, s *scrollback.Session) error
	acts := map[string]call{
		"Engine.Session": func(e *scrollback.Engine, _ *scrollback.Session) error {
			_, err := e.Session(ctx, "o", "s_x")
			return err
		},
		"Engine.NewSession": func(e *scrollback.Engine, _ *scrollback.Session) error { _, err := e.NewSession(ctx, "o"); return err },
		"Engine.DefaultSession": func(e *scrollback.Engine, _ *scrollback.Session) error {
			_, err := e.DefaultSession(ctx, "o")
			return err
		},
		"Engine.ListSessions": func(e *scrollback.Engine, _ *scrollback.Session) error {
			_, err := e.ListSessions(ctx, "o")
			return err
		},
		"Engine.CopySession": func(e *scrollback.Engine, _ *scrollback.Session) error {
			_, err := e.CopySession(ctx, "o", "out_x")
			return err
		},
		"Engine.ForkSession": func(e *scrollback.Engine, _ *scrollback.Session) error {
			_, err := e.ForkSession(ctx, "o", "s_x")
			return err
		},
		"Engine.DeleteSession": func(e *scrollback.Engine, _ *scrollback.Session) error { return e.DeleteSession(ctx, "o", "s_x") },
		"Engine.ReadFile": func(e *scrollback.Engine, _ *scrollback.Session) error {
			_, err := e.ReadFile(ctx, scrollback.ReadFileInput{Path: "doc.go"})
			return err
		},
		"Session.RunCommand": func(_ *scrollback.Engine, s *scrollback.Session) error {
			_, err := s.RunCommand(ctx, scrollback.RunCommandInput{Command: "true"})
			return err
		},
		"Session.RunCode": func(_ *scrollback.Engine, s *scrollback.Session) error {
			_, err := s.RunCode(ctx, scrollback.RunCodeInput{Code: "return 1"})
			return err
		},
		"Session.RunCodeOver": func(_ *scrollback.Engine, s *scrollback.Session) error {
			_, err := s.RunCodeOver(ctx, scrollback.RunCodeInput{Code: "return 1"}, []string{"read_tool_output"})
			return err
		},
		"Session.ReadToolOutput": func(_ *scrollback.Engine, s *scrollback.Session) error {
			_, err := s.ReadToolOutput(ctx, scrollback.ReadInput{ID: "out_x"})
			return err
		},
		"Session.GrepToolOutput": func(_ *scrollback.Engine, s *scrollback.Session) error {
			_, err := s.GrepToolOutput(ctx, scrollback.GrepInput{ID: "out_x", Pattern: "x"})
			return err
		},
		"Session.QueryToolOutput": func(_ *scrollback.Engine, s *scrollback.Session) error {
			_, err := s.QueryToolOutput(ctx, scrollback.QueryInput{ID: "out_x", Filter: "."})
			return err
		},
		"Session.ReadFile": func(_ *scrollback.Engine, s *scrollback.Session) error {
			_, err := s.ReadFile(ctx, scrollback.ReadFileInput{Path: "doc.go"})
			return err
		},
		"Session.Copies": func(_ *scrollback.Engine, s *scrollback.Session) error { _, err := s.Copies(ctx); return err },
		"Session.Cat": func(_ *scrollback.Engine, s *scrollback.Session) error {
			_, err := s.Cat(ctx, "out_x", io.Discard)
			return err
		},
		"Session.CatRange": func(_ *scrollback.Engine, s *scrollback.Session) error {
			_, err := s.CatRange(ctx, "cat", "out_x", 0, -1, io.Discard)
			return err
		},
		"Session.CodeTools": func(_ *scrollback.Engine, s *scrollback.Session) error {
			tools := s.CodeTools()
			if len(tools) == 0 {
				return errors.New("no tools listed")
			}
			for _, tool := range tools {
				if tool.Call == nil {
					return fmt.Errorf("%s has no Call", tool.Name)
				}
				if _, err := tool.Call(ctx, []byte(`{}`)); !errors.Is(err, scrollback.ErrUnavailable) {
					return fmt.Errorf("%s: %v", tool.Name, err)
				}
			}
			return &scrollback.Error{Err: scrollback.ErrUnavailable}
		},
	}
	// Accessors and the calls that report in their result.
	pure := map[string]call{
		"Engine.Store":   func(e *scrollback.Engine, _ *scrollback.Session) error { return zeroOr(e.Store() == nil) },
		"Engine.Options": func(e *scrollback.Engine, _ *scrollback.Session) error { e.Options(); return nil },
		"Session.ID":     func(_ *scrollback.Engine, s *scrollback.Session) error { return zeroOr(s.ID() == "") },
		"Session.Owner":  func(_ *scrollback.Engine, s *scrollback.Session) error { return zeroOr(s.Owner() == "") },
		"Session.Info":   func(_ *scrollback.Engine, s *scrollback.Session) error { return zeroOr(s.Info().ID == "") },
		"Session.Engine": func(_ *scrollback.Engine, s *scrollback.Session) error { return zeroOr(s.Engine() == nil) },
		"Session.Retain": func(_ *scrollback.Engine, s *scrollback.Session) error {
			return zeroOr(s.Retain(ctx, scrollback.RetainInput{Tool: "t", Data: big}).Recovery == scrollback.RecoveryUnavailable)
		},
		"Session.History": func(_ *scrollback.Engine, s *scrollback.Session) error {
			return zeroOr(s.History(ctx, "t", "", big).Recovery == scrollback.RecoveryUnavailable)
		},
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[*scrollback.Engine](), reflect.TypeFor[*scrollback.Session]()} {
		for m := range typ.Methods() {
			name := typ.Elem().Name() + "." + m.Name
			if acts[name] == nil && pure[name] == nil {
				t.Errorf("%s has no case in TestNilReceivers", name)
			}
		}
	}
	for _, r := range []struct {
		name string
		e    *scrollback.Engine
		s    *scrollback.Session
	}{{"nil", nil, nil}, {"zero", new(scrollback.Engine), new(scrollback.Session)}} {
		for name, f := range acts {
			err := noPanic(t, r.name+" "+name, func() error { return f(r.e, r.s) })
			if !errors.Is(err, scrollback.ErrUnavailable) {
				t.Errorf("%s on a %s receiver: %v; want an error of kind unavailable", name, r.name, err)
			}
		}
		for name, f := range pure {
			if err := noPanic(t, r.name+" "+name, func() error { return f(r.e, r.s) }); err != nil {
				t.Errorf("%s on a %s receiver: %v", name, r.name, err)
			}
		}
	}
}

func zeroOr(ok bool) error {
	if !ok {
		return errors.New("not the zero value")
	}
	return nil
}
