package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxUpstreams is how many upstream connections, one per client
// session, a proxy served over HTTP holds at once when
// Options.MaxUpstreams is 0.
const DefaultMaxUpstreams = 16

// ErrTooManyUpstreams is returned to a client session that needs an
// upstream connection of its own while the proxy already holds
// Options.MaxUpstreams of them.
var ErrTooManyUpstreams = errors.New("proxy: too many upstream connections")

// link is one connection to the upstream (made again when it is lost) and
// what it routes back: the proxy's shared link, which lists the upstream's
// features and, over stdio, serves the one client; or, over HTTP, the link
// of one client session, opened on its first forwarded request, declaring
// that client's capabilities, and closed when the session ends.
type link struct {
	p     *Proxy
	owner *server // the client session it serves; nil for the shared link
	lists bool    // the shared link: lists what the upstream offers on connecting
	// modern: the link of clients of protocol 2026-07-28, whose client
	// passes a result that needs input on instead of asking its clients
	// (Proxy.modern).
	modern bool

	connMu   sync.Mutex // serialises connecting
	relistMu sync.Mutex // serialises relist
	mu       sync.Mutex // guards what follows
	cur      *conn
	caps     *mcp.ClientCapabilities // what the next connection declares
	last     string                  // the capabilities the last connection declared (JSON)
	closed   bool
	dialled  bool // a connection was made before

	// Guarded by p.mu: the requests in flight over the link and when it
	// was last used, so that an idle link's connection can give its place
	// to another client's (see reserve).
	inflight int
	lastUse  time.Time

	relay relay
}

// relay routes what the upstream sends on its own over one link (progress,
// log messages, resource updates, and its requests for sampling,
// elicitation and roots) to the client it concerns.
type relay struct {
	mu       sync.Mutex
	next     int64
	progress map[string]progressRoute    // upstream progress token → the client's
	calls    map[*mcp.ServerSession]int  // sessions with requests in flight → how many
	subs     map[string]map[*server]bool // resource URI → the servers subscribed to it
}

func (p *Proxy) newLink(owner *server, caps *mcp.ClientCapabilities) *link {
	l := &link{p: p, owner: owner, lists: owner == nil, caps: caps}
	l.relay.progress = map[string]progressRoute{}
	l.relay.calls = map[*mcp.ServerSession]int{}
	l.relay.subs = map[string]map[*server]bool{}
	return l
}

// declare makes the link's next connection declare caps; a live
// connection that declared others is replaced on its next use.
func (l *link) declare(caps *mcp.ClientCapabilities) {
	l.mu.Lock()
	l.caps = caps
	l.mu.Unlock()
}

// capsKey is caps as the upstream sees them, to tell a change. The
// roots capability is in RootsV2, which JSON leaves out (see cloneCaps).
func capsKey(caps *mcp.ClientCapabilities) string {
	if caps == nil {
		return ""
	}
	b, _ := json.Marshal(struct {
		Caps  *mcp.ClientCapabilities
		Roots *mcp.RootCapabilities
	}{caps, caps.RootsV2})
	return string(b)
}

// clientCaps returns the capabilities ss's client declared in initialize.
func clientCaps(ss *mcp.ServerSession) *mcp.ClientCapabilities {
	if ss == nil {
		return nil
	}
	ip := ss.InitializeParams()
	if ip == nil {
		return nil
	}
	return cloneCaps(ip.Capabilities)
}

// cloneCaps returns a deep copy of caps.
func cloneCaps(caps *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	if caps == nil {
		return nil
	}
	b, err := json.Marshal(caps)
	if err != nil {
		return nil
	}
	var out mcp.ClientCapabilities
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	// The SDK keeps whether the client declared roots in RootsV2, which
	// JSON leaves out (its Roots field is there for every client, with
	// roots or without); the upstream is told of roots by RootsV2 alone.
	if caps.RootsV2 != nil {
		r := *caps.RootsV2
		out.RootsV2 = &r
	}
	return &out
}

// conn returns the link's live connection, connecting when there is none
// or when the client's capabilities changed since it was made. A new
// connection renews the link's resource subscriptions; the shared link's
// also lists what the upstream offers.
func (l *link) conn(ctx context.Context) (*conn, error) {
	p := l.p
	l.connMu.Lock()
	defer l.connMu.Unlock()
	l.mu.Lock()
	c, closed, want := l.cur, l.closed, capsKey(l.caps)
	caps := l.caps
	l.mu.Unlock()
	if closed {
		return nil, &Error{Err: ErrUpstreamDown, Msg: "the proxy (or this client's session) is closed"}
	}
	if c != nil && c.alive() && c.caps == want {
		return c, nil
	}
	if c != nil {
		c.cs.Close()
	}
	if err := p.reserve(l); err != nil {
		return nil, err
	}
	c, err := p.dial(ctx, l, caps)
	if err != nil {
		p.unreserve(l)
		return nil, &Error{Err: ErrUpstreamDown, Msg: fmt.Sprintf("cannot connect to the upstream server %s: %v", p.up, err),
			Hint: "check that the server starts and answers MCP on its own; the proxy tries again on the next call"}
	}
	c.caps = want
	if l.lists {
		lctx, cancel := p.withTimeout(ctx)
		err := p.list(lctx, c, listAll)
		timedOut := errors.Is(lctx.Err(), context.DeadlineExceeded)
		cancel()
		if err != nil {
			c.cs.Close()
			if timedOut {
				return nil, &Error{Err: ErrCallTimeout, Msg: fmt.Sprintf("the upstream server %s did not list its features within %s: %v", p.up, p.opts.CallTimeout, err),
					Hint: "the server may be stuck; the proxy tries again on the next call, or raise --call-timeout"}
			}
			return nil, &Error{Err: ErrUpstreamDown, Msg: fmt.Sprintf("the upstream server %s did not list its features: %v", p.up, err)}
		}
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		c.cs.Close()
		return nil, &Error{Err: ErrUpstreamDown, Msg: "the proxy (or this client's session) is closed"}
	}
	// Every connection after the first that declares what the one before
	// declared replaces a lost one (dropped by a broken call, so l.cur may
	// already be nil); one that declares a client's new capabilities does
	// not.
	if l.dialled && l.last == want {
		p.restarts.Add(1)
	}
	l.cur, l.dialled, l.last = c, true, want
	l.mu.Unlock()
	l.resubscribe(ctx, c)
	if l.owner != nil && l.owner.ownView() {
		// A new upstream session (a restarted command, say) may not offer
		// what the last one did.
		go l.relist(listAll, false)
	}
	return c, nil
}

// settle waits, within the call timeout, for the connection the link is
// to make for its client's capabilities when they differ from its live
// connection's, and for what the upstream offers over it to be listed.
// Over stdio the shared link connects again, declaring them, as the
// client initializes (see passThrough), and a server may offer some
// features only to a client with a capability (a tool that samples): a
// list the client asks for at once must wait for that connection, not
// answer with what the upstream offered a client without them. (The
// connection it replaces is closed as the new one is made.) A link that
// never connected, or whose connection was lost with no new one being
// made (the upstream is down), is left to the next request, so that a
// list does not wait for an upstream that does not start.
func (l *link) settle(ctx context.Context) {
	l.mu.Lock()
	c, want := l.cur, capsKey(l.caps)
	l.mu.Unlock()
	if c == nil || c.caps == want {
		return
	}
	if l.connMu.TryLock() {
		// No connection is being made: one was made meanwhile, or the
		// link is down, or the one for the client is yet to be made.
		l.mu.Lock()
		c = l.cur
		l.mu.Unlock()
		l.connMu.Unlock()
		if c == nil || c.caps == want || !c.alive() {
			return
		}
	}
	ctx, cancel := l.p.withTimeout(ctx)
	defer cancel()
	l.conn(ctx)
}

// live returns the link's connection if it is up, without connecting.
func (l *link) live() *conn {
	l.mu.Lock()
	c := l.cur
	l.mu.Unlock()
	if c == nil || !c.alive() {
		return nil
	}
	return c
}

// close ends the link's connection (and its upstream process, for a
// command); later requests over it get an error.
func (l *link) close() error {
	l.mu.Lock()
	c := l.cur
	l.cur, l.closed = nil, true
	l.mu.Unlock()
	if c != nil {
		return c.cs.Close()
	}
	return nil
}

// drop ends a connection that broke during a call, and forgets it at once:
// the error tells the client to call again, and that call must connect
// afresh, not find the old session because the goroutine that marks it done
// has not run yet.
func (l *link) drop(c *conn) {
	l.mu.Lock()
	if l.cur == c {
		l.cur = nil
	}
	l.mu.Unlock()
	c.cs.Close()
}

// servers are the servers whose clients the link serves.
func (l *link) servers() []*server {
	if l.owner != nil {
		return []*server{l.owner}
	}
	var out []*server
	for _, s := range l.p.servers() {
		if !s.own {
			out = append(out, s)
		}
	}
	return out
}

// newClient makes the MCP client of one connection of l: it declares caps
// (the client's, so that the upstream asks only for what the client can
// do) and relays what the upstream sends to l's clients.
func (l *link) newClient(caps *mcp.ClientCapabilities, ord *noticeOrder) *mcp.Client {
	p := l.p
	o := &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			go l.changed(listTools)
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			go l.changed(listPrompts)
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			go l.changed(listResources)
		},
	}
	l.relayOptions(o, caps, ord)
	if l.modern {
		o.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "scrollback-proxy", Version: p.opts.Version}, o)
	c.AddReceivingMiddleware(l.relayMiddleware(caps != nil && caps.Elicitation != nil))
	return c
}

// changed follows the upstream's word that its lists changed (what): on
// a client session's own link, for that client alone (relist); on a
// shared one, for every client that follows the proxy's lists
// (Proxy.refresh).
func (l *link) changed(what int) {
	if l.owner == nil {
		l.p.refresh(what)
		return
	}
	l.relist(what, true)
}

// relist lists again, over l's own connection, what its upstream session
// said changed, and updates l's client alone, which from then on follows
// its own session's lists. Over HTTP each client session has an upstream
// session (a process, for a command) of its own, whose lists may change
// by what that client did (a tool that enables others, say); the proxy's
// shared connection, another session, would not see the change. told:
// the upstream told of a change, which the client is told of even when
// the lists are the same.
func (l *link) relist(what int, told bool) {
	l.relistMu.Lock()
	defer l.relistMu.Unlock()
	c := l.live()
	if c == nil {
		return
	}
	s := l.owner
	ctx, cancel := l.p.withTimeout(context.Background())
	defer cancel()
	snap, toolsChanged, err := fetch(ctx, c, what, s.snapshot())
	if err != nil {
		l.p.log.Warn("proxy: re-listing a client's upstream session's features failed", "err", err)
		return
	}
	s.mu.Lock()
	s.view = &snap
	s.mu.Unlock()
	s.update(snap, what, toolsChanged, told)
}

// openLink gives s a link of its own; it connects on first use, within
// Options.MaxUpstreams (see reserve).
func (p *Proxy) openLink(s *server, caps *mcp.ClientCapabilities) (*link, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, &Error{Err: ErrUpstreamDown, Msg: "the proxy is closed"}
	}
	l := p.newLink(s, caps)
	p.links[l] = true
	return l, nil
}

// closeLink ends a client session's own link.
func (p *Proxy) closeLink(l *link) {
	p.mu.Lock()
	delete(p.links, l)
	delete(p.held, l)
	p.mu.Unlock()
	l.close()
}

// reserve gives a client session's link a place among the
// Options.MaxUpstreams connections the proxy may hold, before it
// connects. When they are all taken, the link that has been idle longest
// (no request in flight, no resource subscription) gives its place up: its
// connection is closed, and made again when its client next uses the
// upstream. Clients that open sessions and never end them (a test suite,
// a client that crashed) so wait for the idle timeout without keeping
// others out. Only when every connection is busy is the link refused,
// with ErrTooManyUpstreams. The shared links take no place.
func (p *Proxy) reserve(l *link) error {
	if l.owner == nil {
		return nil
	}
	p.mu.Lock()
	if p.held[l] {
		p.mu.Unlock()
		return nil
	}
	var victim *link
	if n := p.opts.MaxUpstreams; n > 0 && len(p.held) >= n {
		for h := range p.held {
			if h.inflight == 0 && !h.subscribed() && (victim == nil || h.lastUse.Before(victim.lastUse)) {
				victim = h
			}
		}
		if victim == nil {
			p.mu.Unlock()
			return &Error{Err: ErrTooManyUpstreams,
				Msg:  fmt.Sprintf("the proxy already holds %d upstream connections, one for each client session that used the upstream, each with a request in flight or a resource subscription, and allows no more", n),
				Hint: "try again when a call has ended, or start the proxy with a higher --max-upstreams"}
		}
		delete(p.held, victim)
	}
	p.held[l] = true
	var c *conn
	if victim != nil {
		// Under p.mu, so that no request starts over the victim before it
		// lets its connection go: the next one connects afresh, and is not
		// counted as a restart.
		victim.mu.Lock()
		c, victim.cur, victim.dialled = victim.cur, nil, false
		victim.mu.Unlock()
	}
	p.mu.Unlock()
	if c != nil {
		p.log.Info("proxy: closing the upstream connection of the client session idle longest, to make room for another", "max_upstreams", p.opts.MaxUpstreams)
		c.cs.Close()
	}
	return nil
}

// unreserve gives l's place back when it holds no connection.
func (p *Proxy) unreserve(l *link) {
	p.mu.Lock()
	delete(p.held, l)
	p.mu.Unlock()
}

// use marks a request over l in flight until done is called: a link in
// use keeps its connection.
func (l *link) use() (done func()) {
	p := l.p
	p.mu.Lock()
	l.inflight++
	l.lastUse = time.Now()
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		l.inflight--
		l.lastUse = time.Now()
		p.mu.Unlock()
	}
}

// subscribed reports whether the link's clients hold resource
// subscriptions, which a closed connection would lose.
func (l *link) subscribed() bool {
	l.relay.mu.Lock()
	defer l.relay.mu.Unlock()
	return len(l.relay.subs) > 0
}

// Upstreams returns how many upstream connections of client sessions the
// proxy holds (over HTTP, one per client session that used the upstream
// recently), not counting the shared ones.
func (p *Proxy) Upstreams() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.held)
}
