package mcpserver

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// A RateLimit bounds the requests each principal (a token's or an OAuth
// user's owner; the local owner without tokens) sends to /mcp: a token
// bucket per principal, so that one busy client cannot starve the others.
// A request over it gets HTTP 429 with Retry-After and a JSON-RPC error
// saying when to retry; other principals are not affected.
type RateLimit struct {
	per   rate.Limit
	burst int
	desc  string

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
	seen     int // requests since the last sweep
}

// sweepEvery is how many requests pass between two sweeps of idle
// principals' buckets.
const sweepEvery = 4096

// ParseRateLimit reads a rate as --rate-limit takes it: N/s, N/m or N/h,
// N a positive number ("20/s", "0.5/s", "600/m"). The bucket holds a
// second's worth of requests (at least one), so a client may send that
// many at once after a pause.
func ParseRateLimit(s string) (*RateLimit, error) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	var per time.Duration
	var word string
	switch unit {
	case "s":
		per, word = time.Second, "second"
	case "m":
		per, word = time.Minute, "minute"
	case "h":
		per, word = time.Hour, "hour"
	default:
		ok = false
	}
	n, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || n <= 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return nil, fmt.Errorf("%q is not a rate: want requests per second, minute or hour, such as 20/s or 600/m", s)
	}
	noun := "requests"
	if n == 1 {
		noun = "request"
	}
	return NewRateLimit(rate.Limit(n/per.Seconds()), fmt.Sprintf("%s %s per %s", num, noun, word)), nil
}

// NewRateLimit returns a limit of per requests a second for each
// principal; desc is how messages name it ("20 requests per second").
func NewRateLimit(per rate.Limit, desc string) *RateLimit {
	burst := int(math.Ceil(float64(per)))
	if burst < 1 {
		burst = 1
	}
	return &RateLimit{per: per, burst: burst, desc: desc, limiters: map[string]*rate.Limiter{}}
}

// String describes the limit ("20 requests per second").
func (l *RateLimit) String() string { return l.desc }

// reserve takes a request's place in principal's bucket, or says how long
// until there is one.
func (l *RateLimit) reserve(principal string, now time.Time) (wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen++; l.seen >= sweepEvery {
		l.sweep(now)
	}
	lim := l.limiters[principal]
	if lim == nil {
		lim = rate.NewLimiter(l.per, l.burst)
		l.limiters[principal] = lim
	}
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d
	}
	return 0
}

// sweep forgets the buckets that are full again: a new bucket would be the
// same, so the map stays as small as the set of recently busy principals.
func (l *RateLimit) sweep(now time.Time) {
	l.seen = 0
	for p, lim := range l.limiters {
		if lim.TokensAt(now) >= float64(l.burst) {
			delete(l.limiters, p)
		}
	}
}

// refuse answers a request over the limit: 429, Retry-After in whole
// seconds (at least 1), and a JSON-RPC error with the request's id.
func (l *RateLimit) refuse(w http.ResponseWriter, id []byte, name string, wait time.Duration) {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	who := name
	if who == "" {
		who = "this client"
	}
	writeRPCError(w, http.StatusTooManyRequests, id, CodeLimit,
		fmt.Sprintf("scrollback: %s is over this server's rate limit of %s; retry after %d s", who, l.desc, secs))
}
