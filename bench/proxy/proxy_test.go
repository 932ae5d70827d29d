// Package proxybench measures what the MCP proxy adds to a call, against
// calling the same upstream server directly, in one run:
//
//   - BenchmarkSmallResult: the p50 of the latency the proxy adds to a call
//     whose result passes through (target: at most 1 ms);
//   - BenchmarkLargeResult: the time the proxy adds to a 5 MiB result, which
//     it retains in a SQLite store and previews (target: at most 150 ms);
//   - BenchmarkProgress: how long an upstream's progress notification takes
//     to reach the client (target: at most 5 ms at p50 through the proxy).
//
// Both connect to an in-process Go MCP server over a pipe, directly and
// through the proxy, and alternate the two so that they see the same
// machine. Run with
//
//	go test -run XXX -bench . ./bench/proxy
package proxybench

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/proxy"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

type sizeArgs struct {
	N int `json:"n"`
}

func upstream() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench-upstream"}, nil)
	cache := map[int]string{}
	mcp.AddTool(srv, &mcp.Tool{Name: "text"}, func(_ context.Context, _ *mcp.CallToolRequest, in sizeArgs) (*mcp.CallToolResult, any, error) {
		s, ok := cache[in.N]
		if !ok {
			s = strings.Repeat("0123456789abcdef ligne é\n", in.N/25+1)[:in.N]
			cache[in.N] = s
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil, nil
	})
	return srv
}

func dial(srv *mcp.Server) func(context.Context) (io.ReadWriteCloser, error) {
	return func(context.Context) (io.ReadWriteCloser, error) {
		a, b := net.Pipe()
		go srv.Run(context.Background(), &mcp.IOTransport{Reader: b, Writer: b, MaxLineLength: -1})
		return a, nil
	}
}

// clients returns a client of the upstream directly and one through the
// proxy.
func clients(b *testing.B) (direct, proxied *mcp.ClientSession) {
	ctx := context.Background()
	srv := upstream()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil)
	rwc, _ := dial(srv)(ctx)
	direct, err := c.Connect(ctx, &mcp.IOTransport{Reader: rwc, Writer: rwc, MaxLineLength: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { direct.Close() })

	st, err := sqlite.Open(filepath.Join(b.TempDir(), "scrollback.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	eng := scrollback.New(st, scrollback.Options{})
	p, err := proxy.New(eng, proxy.Upstream{Dial: dial(srv)}, proxy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	sess, err := eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		b.Fatal(err)
	}
	s1, s2 := net.Pipe()
	go p.Server(sess).Run(ctx, &mcp.IOTransport{Reader: s1, Writer: s1})
	proxied, err = c.Connect(ctx, &mcp.IOTransport{Reader: s2, Writer: s2}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { proxied.Close() })
	return direct, proxied
}

func timeCall(b *testing.B, cs *mcp.ClientSession, n int) time.Duration {
	start := time.Now()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "text", Arguments: sizeArgs{N: n}})
	if err != nil || res.IsError {
		b.Fatal(err, res)
	}
	return time.Since(start)
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// measure alternates direct and proxied calls of n bytes and reports the
// medians.
func measure(b *testing.B, n int) (direct, proxied time.Duration) {
	dc, pc := clients(b)
	timeCall(b, dc, n) // warm up: schemas, the session, SQLite
	timeCall(b, pc, n)
	var ds, ps []time.Duration
	b.ResetTimer()
	for b.Loop() {
		ds = append(ds, timeCall(b, dc, n))
		ps = append(ps, timeCall(b, pc, n))
	}
	return median(ds), median(ps)
}

func BenchmarkSmallResult(b *testing.B) {
	d, p := measure(b, 200)
	b.ReportMetric(float64(d.Microseconds()), "p50-direct-µs")
	b.ReportMetric(float64(p.Microseconds()), "p50-proxy-µs")
	b.ReportMetric(float64((p - d).Microseconds()), "p50-added-µs")
	if p-d > time.Millisecond {
		b.Errorf("the proxy adds %s at p50 to a small result; the target is at most 1 ms", p-d)
	}
}

func BenchmarkLargeResult(b *testing.B) {
	d, p := measure(b, 5<<20)
	b.ReportMetric(float64(d.Milliseconds()), "p50-direct-ms")
	b.ReportMetric(float64(p.Milliseconds()), "p50-proxy-ms")
	b.ReportMetric(float64((p - d).Milliseconds()), "p50-added-ms")
	if p-d > 150*time.Millisecond {
		b.Errorf("the proxy adds %s to a 5 MiB result; the target is at most 150 ms", p-d)
	}
}

// progressUpstream's tool "tick" sends one progress notification whose
// message is the time it was sent (Unix nanoseconds), then returns.
func progressUpstream() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench-progress"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	mcp.AddTool(srv, &mcp.Tool{Name: "tick"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1,
			Message: strconv.FormatInt(time.Now().UnixNano(), 10)})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	return srv
}

// BenchmarkProgress measures how long an upstream's progress notification
// takes to reach the client, directly and through the proxy (target: at
// most 5 ms at p50 through the proxy).
func BenchmarkProgress(b *testing.B) {
	ctx := context.Background()
	srv := progressUpstream()
	got := make(chan time.Duration, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "bench"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			sent, _ := strconv.ParseInt(r.Params.Message, 10, 64)
			got <- time.Since(time.Unix(0, sent))
		},
	})
	rwc, _ := dial(srv)(ctx)
	direct, err := c.Connect(ctx, &mcp.IOTransport{Reader: rwc, Writer: rwc, MaxLineLength: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { direct.Close() })
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "scrollback.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	eng := scrollback.New(st, scrollback.Options{})
	p, err := proxy.New(eng, proxy.Upstream{Dial: dial(srv)}, proxy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	sess, err := eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		b.Fatal(err)
	}
	s1, s2 := net.Pipe()
	go p.Server(sess).Run(ctx, &mcp.IOTransport{Reader: s1, Writer: s1})
	proxied, err := c.Connect(ctx, &mcp.IOTransport{Reader: s2, Writer: s2}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { proxied.Close() })

	tick := func(cs *mcp.ClientSession, i int) time.Duration {
		params := &mcp.CallToolParams{Name: "tick", Arguments: map[string]any{}}
		params.SetProgressToken("tick-" + strconv.Itoa(i))
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
		select {
		case d := <-got:
			return d
		case <-time.After(10 * time.Second):
			b.Fatalf("no progress notification within 10 s (%s)", cs.InitializeResult().ServerInfo.Name)
		}
		return 0
	}
	tick(direct, 0)
	tick(proxied, 0)
	var ds, ps []time.Duration
	i := 1
	for b.Loop() {
		ds = append(ds, tick(direct, i))
		ps = append(ps, tick(proxied, i))
		i++
	}
	d, pr := median(ds), median(ps)
	b.ReportMetric(float64(d.Microseconds()), "p50-direct-µs")
	b.ReportMetric(float64(pr.Microseconds()), "p50-proxy-µs")
	if pr > 5*time.Millisecond {
		b.Errorf("a progress notification takes %s at p50 to reach the client through the proxy; the target is at most 5 ms", pr)
	}
}
