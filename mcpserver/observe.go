package mcpserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/scrollback-dev/scrollback/store"
)

// An Observer counts and logs what an HTTP server does: one log line and
// one sample of each metric per tool call, the MCP sessions open, the
// store's errors and the bytes it saved, plus the Go runtime's collectors.
// Logs and metrics name a token by its name, never the token, and never
// carry the output's contents or the arguments' values. A nil *Observer
// observes nothing.
type Observer struct {
	log *slog.Logger
	reg *prometheus.Registry

	calls       *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	sessions    *prometheus.GaugeVec
	storeErrors *prometheus.CounterVec
	savedBytes  prometheus.Counter
	rateLimits  *prometheus.CounterVec

	mu    sync.Mutex
	tools map[string]bool // tool names seen, as labels; bounded

	saved    chan struct{} // a copy was saved: the store's statistics moved
	statsGap time.Duration // statsMinGap; shorter in tests

	// Set by Trace; nil when tracing is off.
	tp     trace.TracerProvider
	prop   propagation.TextMapPropagator
	tracer trace.Tracer
}

// maxToolLabels bounds the tool names used as metric labels: a client
// calling made-up names must not grow the metrics without end.
const maxToolLabels = 256

// NewObserver returns an observer that logs to log (nil: no logs) and
// registers its metrics and the Go runtime's on a registry of its own.
func NewObserver(log *slog.Logger) *Observer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o := &Observer{log: log, reg: prometheus.NewRegistry(), tools: map[string]bool{}, saved: make(chan struct{}, 1), statsGap: statsMinGap}
	o.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "scrollback_tool_calls_total",
		Help: "Tool calls, by tool, outcome (ok, tool_error or its error kind, refused, cancelled, protocol_error) and token name.",
	}, []string{"tool", "outcome", "token"})
	o.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "scrollback_tool_call_duration_seconds",
		Help:    "Time from a tool call's arrival to its result, by tool.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
	}, []string{"tool"})
	o.sessions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "scrollback_sessions_active",
		Help: "MCP sessions open over HTTP, by token name.",
	}, []string{"token"})
	o.storeErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "scrollback_store_errors_total",
		Help: "Store operations that failed for a reason other than a missing id or a bad offset, by operation.",
	}, []string{"op"})
	o.savedBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "scrollback_saved_bytes_total",
		Help: "Bytes of retained copies saved by this process (uncompressed).",
	})
	o.rateLimits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "scrollback_rate_limited_total",
		Help: "Requests refused with 429 for being over --rate-limit, by token or user name.",
	}, []string{"token"})
	o.reg.MustRegister(o.calls, o.latency, o.sessions, o.storeErrors, o.savedBytes, o.rateLimits,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return o
}

// Registry returns the registry the observer's metrics are on, to add
// more (the proxy's upstream restarts, say).
func (o *Observer) Registry() *prometheus.Registry { return o.reg }

// Logger returns the observer's logger.
func (o *Observer) Logger() *slog.Logger { return o.log }

// Handler serves the metrics in the Prometheus text format.
func (o *Observer) Handler() http.Handler {
	return promhttp.HandlerFor(o.reg, promhttp.HandlerOpts{ErrorLog: slogPrinter{o.log}})
}

type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.l.Error("metrics", "error", v) }

// StoreStats are a store's totals, for the metrics.
type StoreStats struct {
	RetainedBytes int64 // logical (uncompressed) bytes of the copies kept
	StoredBytes   int64 // bytes they take in the database
	Evicted       int64 // copies evicted under a quota since the store began
}

// Timing of WatchStore.
const (
	// DefaultStatsEvery is how often WatchStore asks for the store's
	// statistics when told 0.
	DefaultStatsEvery = 30 * time.Second
	// statsTimeout bounds one question for the statistics.
	statsTimeout = 10 * time.Second
	// statsMinGap is the least time between two questions: saves that
	// follow each other closely are answered by one, so that a busy server
	// asks the database (a scan of its copies) at most this often.
	statsMinGap = 5 * time.Second
)

// WatchStore reports stats as scrollback_store_retained_bytes,
// scrollback_store_stored_bytes and scrollback_store_evicted_copies_total.
// It asks stats in the background, never while a call or a scrape waits:
// at once, every `every` (0: DefaultStatsEvery), and soon after a copy is
// saved through the observer's Store, at most once in five seconds. A failure
// counts as a store error (op "stats") and hides the three metrics until
// stats answers again. It stops when ctx ends or stop is called; stop
// returns once stats is no longer running, so that the store can then be
// closed. Call it once, with the store's statistics when it keeps them.
func (o *Observer) WatchStore(ctx context.Context, every time.Duration, stats func(context.Context) (StoreStats, error)) (stop func()) {
	if every <= 0 {
		every = DefaultStatsEvery
	}
	c := &storeCollector{}
	o.reg.MustRegister(c)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			qctx, qcancel := context.WithTimeout(ctx, statsTimeout)
			s, err := stats(qctx)
			qcancel()
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				o.storeErrors.WithLabelValues("stats").Inc()
				o.log.Warn("store statistics", "error", err)
			}
			c.set(s, err == nil)
			select {
			case <-ctx.Done():
				return
			case <-time.After(o.statsGap):
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			case <-o.saved:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// savedCopy tells WatchStore that the statistics changed.
func (o *Observer) savedCopy(bytes int64) {
	o.savedBytes.Add(float64(bytes))
	select {
	case o.saved <- struct{}{}:
	default: // a question is already due
	}
}

// storeCollector serves the statistics WatchStore last got.
type storeCollector struct {
	mu   sync.Mutex
	s    StoreStats
	have bool
}

func (c *storeCollector) set(s StoreStats, have bool) {
	c.mu.Lock()
	c.s, c.have = s, have
	c.mu.Unlock()
}

var (
	descRetained = prometheus.NewDesc("scrollback_store_retained_bytes", "Logical bytes of the retained copies in the store (the whole database: the same on every instance).", nil, nil)
	descStored   = prometheus.NewDesc("scrollback_store_stored_bytes", "Bytes the retained copies take in the store (the whole database).", nil, nil)
	descEvicted  = prometheus.NewDesc("scrollback_store_evicted_copies_total", "Copies evicted under a storage quota since the database was made.", nil, nil)
)

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descRetained
	ch <- descStored
	ch <- descEvicted
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	s, have := c.s, c.have
	c.mu.Unlock()
	if !have {
		return
	}
	ch <- prometheus.MustNewConstMetric(descRetained, prometheus.GaugeValue, float64(s.RetainedBytes))
	ch <- prometheus.MustNewConstMetric(descStored, prometheus.GaugeValue, float64(s.StoredBytes))
	ch <- prometheus.MustNewConstMetric(descEvicted, prometheus.CounterValue, float64(s.Evicted))
}

// Store returns st with its failures counted as store errors and the bytes
// of the copies it saves counted. Every other method is st's own.
func (o *Observer) Store(st store.Store) store.Store {
	if o == nil {
		return st
	}
	obs := &observedStore{Store: st, o: o}
	// Keep what the store offers beyond the Store contract: the engine
	// saves while a command runs only through a Streamer, and retention and
	// stats need a Housekeeper.
	h, isH := st.(store.Housekeeper)
	var sr store.Streamer
	inner, isS := st.(store.Streamer)
	if isS {
		sr = observedStreamer{inner, o}
	}
	switch {
	case isH && isS:
		return struct {
			*observedStore
			store.Housekeeper
			store.Streamer
		}{obs, h, sr}
	case isH:
		return struct {
			*observedStore
			store.Housekeeper
		}{obs, h}
	case isS:
		return struct {
			*observedStore
			store.Streamer
		}{obs, sr}
	}
	return obs
}

type observedStore struct {
	store.Store
	o *Observer
}

// failed counts err when it is a failure of the store, not an answer.
func (s *observedStore) failed(op string, err error) error { return s.o.storeFailed(op, err) }

// storeFailed counts err when it is a failure of the store, not an answer.
func (o *Observer) storeFailed(op string, err error) error {
	if err != nil && !errors.Is(err, store.ErrCopyNotFound) && !errors.Is(err, store.ErrSessionNotFound) &&
		!errors.Is(err, store.ErrOffset) && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		o.storeErrors.WithLabelValues(op).Inc()
	}
	return err
}

func (s *observedStore) CreateSession(ctx context.Context, owner string) (store.Session, error) {
	ctx, span := s.o.storeSpan(ctx, "create_session", "")
	ss, err := s.Store.CreateSession(ctx, owner)
	if span != nil {
		span.SetAttributes(attrSession.String(ss.ID))
	}
	endStoreSpan(span, -1, err)
	return ss, s.failed("create_session", err)
}

func (s *observedStore) GetSession(ctx context.Context, owner, id string) (store.Session, error) {
	ctx, span := s.o.storeSpan(ctx, "get_session", id)
	ss, err := s.Store.GetSession(ctx, owner, id)
	endStoreSpan(span, -1, err)
	return ss, s.failed("get_session", err)
}

func (s *observedStore) SaveCopy(ctx context.Context, session string, meta store.CopyMeta, r io.Reader) (store.CopyInfo, error) {
	ctx, span := s.o.storeSpan(ctx, "save_copy", session)
	info, err := s.Store.SaveCopy(ctx, session, meta, r)
	endStoreSpan(span, info.TotalBytes, err)
	if err == nil {
		s.o.savedCopy(info.TotalBytes)
	}
	return info, s.failed("save_copy", err)
}

// observedStreamer counts the copies saved while their commands ran, as
// SaveCopy counts the others.
type observedStreamer struct {
	st store.Streamer
	o  *Observer
}

func (s observedStreamer) BeginCopy(ctx context.Context, session string) (store.PendingCopy, error) {
	spanCtx, span := s.o.storeSpan(ctx, "begin_copy", session)
	p, err := s.st.BeginCopy(spanCtx, session)
	endStoreSpan(span, -1, err)
	if err != nil {
		return nil, s.o.storeFailed("begin_copy", err)
	}
	return &observedPending{PendingCopy: p, o: s.o, session: session}, nil
}

type observedPending struct {
	store.PendingCopy
	o       *Observer
	session string
}

// Append is not traced: a command's output arrives in many small appends,
// and a span each would say nothing the save's span does not.
func (p *observedPending) Append(ctx context.Context, b []byte) error {
	return p.o.storeFailed("append_copy", p.PendingCopy.Append(ctx, b))
}

func (p *observedPending) Finish(ctx context.Context, meta store.CopyMeta, r io.Reader) (store.CopyInfo, error) {
	ctx, span := p.o.storeSpan(ctx, "save_copy", p.session)
	info, err := p.PendingCopy.Finish(ctx, meta, r)
	endStoreSpan(span, info.TotalBytes, err)
	if err == nil {
		p.o.savedCopy(info.TotalBytes)
	}
	return info, p.o.storeFailed("save_copy", err)
}

func (s *observedStore) StatCopy(ctx context.Context, session, id string) (store.CopyInfo, error) {
	ctx, span := s.o.storeSpan(ctx, "stat_copy", session)
	info, err := s.Store.StatCopy(ctx, session, id)
	endStoreSpan(span, -1, err)
	return info, s.failed("stat_copy", err)
}

func (s *observedStore) ReadCopyAt(ctx context.Context, session, id string, p []byte, off int64) (int, error) {
	ctx, span := s.o.storeSpan(ctx, "read_copy", session)
	if span != nil {
		span.SetAttributes(attrOffset.Int64(off))
	}
	n, err := s.Store.ReadCopyAt(ctx, session, id, p, off)
	endStoreSpan(span, int64(n), err)
	return n, s.failed("read_copy", err)
}

func (s *observedStore) StatReadCopyAt(ctx context.Context, session, id string, p []byte, off int64) (store.CopyInfo, int, error) {
	ctx, span := s.o.storeSpan(ctx, "read_copy", session)
	if span != nil {
		span.SetAttributes(attrOffset.Int64(off))
	}
	info, n, err := s.Store.StatReadCopyAt(ctx, session, id, p, off)
	endStoreSpan(span, int64(n), err)
	return info, n, s.failed("read_copy", err)
}

func (s *observedStore) ListCopies(ctx context.Context, session string) ([]store.CopyInfo, error) {
	ctx, span := s.o.storeSpan(ctx, "list_copies", session)
	list, err := s.Store.ListCopies(ctx, session)
	endStoreSpan(span, -1, err)
	return list, s.failed("list_copies", err)
}

func (s *observedStore) DefaultSession(ctx context.Context, owner string) (store.Session, error) {
	ctx, span := s.o.storeSpan(ctx, "default_session", "")
	ss, err := s.Store.DefaultSession(ctx, owner)
	if span != nil {
		span.SetAttributes(attrSession.String(ss.ID))
	}
	endStoreSpan(span, -1, err)
	return ss, s.failed("default_session", err)
}

func (o *Observer) rateLimited(token string) {
	if o != nil {
		o.rateLimits.WithLabelValues(token).Inc()
		o.log.Debug("rate limited", slog.String("token", token))
	}
}

func (o *Observer) sessionOpened(token string) {
	if o != nil {
		o.sessions.WithLabelValues(token).Inc()
	}
}

func (o *Observer) sessionClosed(token string) {
	if o != nil {
		o.sessions.WithLabelValues(token).Dec()
	}
}

// toolLabel returns name as a label, or "other" once maxToolLabels names
// have been seen.
func (o *Observer) toolLabel(name string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.tools[name] {
		return name
	}
	if len(o.tools) >= maxToolLabels || len(name) > 128 {
		return "other"
	}
	o.tools[name] = true
	return name
}

// Middleware logs and counts each tools/call of an MCP server whose tools
// act on b's session, as the HTTP handler does for each of its sessions:
// add it to a server served otherwise (over stdio, say) with
// AddReceivingMiddleware, after the server's own middleware, so that it
// sees the results as clients get them. Over stdio the token is "local".
func (o *Observer) Middleware(b *Binding) mcp.Middleware { return o.middleware(b) }

// middleware logs and counts each tools/call of one MCP session.
func (o *Observer) middleware(b *Binding) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		if o == nil {
			return next
		}
		handle := next
		if o.Tracing() {
			handle = func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				return o.traceMCP(ctx, b, method, req, next)
			}
		}
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return handle(ctx, method, req)
			}
			start := time.Now()
			res, err := handle(ctx, method, req)
			d := time.Since(start)
			tool, argBytes := "", 0
			if ctr, ok := req.(*mcp.CallToolRequest); ok && ctr.Params != nil {
				tool, argBytes = ctr.Params.Name, len(ctr.Params.Arguments)
			}
			tool = o.toolLabel(tool)
			token := "local"
			if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
				token = TokenName(extra.TokenInfo)
			}
			outcome, resultBytes := callOutcome(ctx, res, err)
			o.calls.WithLabelValues(tool, outcome, token).Inc()
			o.latency.WithLabelValues(tool).Observe(d.Seconds())
			if o.log.Enabled(ctx, slog.LevelInfo) {
				session := ""
				if s := b.Current(); s != nil {
					session = s.ID()
				}
				o.log.LogAttrs(ctx, slog.LevelInfo, "tool call",
					slog.String("session", session),
					slog.String("token", token),
					slog.String("tool", tool),
					slog.Duration("duration", d),
					slog.String("outcome", outcome),
					slog.Int("args_bytes", argBytes),
					slog.Int("result_bytes", resultBytes))
			}
			return res, err
		}
	}
}

// callOutcome names how a call ended, and counts the bytes of its result's
// text.
func callOutcome(ctx context.Context, res mcp.Result, err error) (string, int) {
	if err != nil {
		var werr *jsonrpc.Error
		switch {
		case errors.As(err, &werr) && werr.Code == CodeLimit:
			return "refused", 0
		case ctx.Err() != nil:
			return "cancelled", 0
		}
		return "protocol_error", 0
	}
	r, ok := res.(*mcp.CallToolResult)
	if !ok || r == nil {
		return "ok", 0
	}
	n := 0
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			n += len(tc.Text)
		}
	}
	if !r.IsError {
		return "ok", n
	}
	if kind, ok := r.Meta[MetaErrorKind].(string); ok && kind != "" && len(kind) <= 32 {
		return kind, n
	}
	return "tool_error", n
}
