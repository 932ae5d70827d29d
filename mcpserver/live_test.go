package mcpserver

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
)

// HTTPOptions.Live holds the scrollback session of each open MCP session:
// one made by a tool call, one resumed with the Scrollback-Session header;
// not a client that made none. A session leaves the set when its client
// closes it, or when it is closed for being idle.
func TestHTTPLive(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	live := &Live{}
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Live: live, IdleTimeout: 2 * time.Second}))
	t.Cleanup(ts.Close)

	resumed, err := eng.NewSession(context.Background(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	a := mustHTTPClient(t, ts.URL, nil)
	_, sessA := runBig(t, a)
	mustHTTPClient(t, ts.URL, map[string]string{SessionHeader: resumed.ID()})
	c := mustHTTPClient(t, ts.URL, nil)
	if _, err := c.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	want := []string{sessA, resumed.ID()}
	slices.Sort(want)
	if got := live.Sessions(); !slices.Equal(got, want) {
		t.Fatalf("Live.Sessions() = %v, want %v (the tool-calling client's and the resumed one)", got, want)
	}

	a.Close()
	waitLive(t, live, []string{resumed.ID()}, "after client A closed its session")
	// The resumed client sends nothing more: the idle timeout closes its
	// session, and it is no longer held.
	waitLive(t, live, nil, "after the idle timeout")
}

// waitLive polls, with a generous bound, until live holds exactly want.
func waitLive(t *testing.T, live *Live, want []string, when string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got := live.Sessions()
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: Live.Sessions() = %v, want %v", when, got, want)
		}
	}
}

// A nil *Live holds nothing and its release does nothing; a binding held
// twice stays held until both holds are released, each release counting
// once however often it is called.
func TestLiveHold(t *testing.T) {
	var none *Live
	none.Hold(nil)()
	if got := none.Sessions(); got != nil {
		t.Errorf("nil Live: %v", got)
	}
	eng, _ := newEngine(t, filepager.Options{})
	s, err := eng.NewSession(context.Background(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	var l Live
	b := BindSession(s)
	r1, r2 := l.Hold(b), l.Hold(b)
	unmade := NewBinding(eng, scrollback.LocalOwner) // no session yet: holds none
	l.Hold(unmade)
	r1()
	r1()
	if got := l.Sessions(); !slices.Equal(got, []string{s.ID()}) {
		t.Errorf("after one of two releases: %v, want [%s]", got, s.ID())
	}
	r2()
	if got := l.Sessions(); len(got) != 0 {
		t.Errorf("after both releases: %v, want none", got)
	}
}
