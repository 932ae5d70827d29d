// Package sample makes typical tool output for the store's tests and
// benchmarks, the same on both backends.
package sample

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"
)

// Typical tool output, for the compression figures: each generator makes
// about n bytes of the kind of text agents retain, with the variation real
// output has (random durations, ids, values), so that the ratio is not
// that of a repeated line.

// GoTestLog is `go test -v` output of table-driven tests: RUN and PASS
// lines for tests and their subtests, with durations, a log line with a
// number or an id now and then, the odd failure, a summary per package.
func GoTestLog(n int) []byte {
	r := rand.New(rand.NewPCG(1, 1))
	var b bytes.Buffer
	pkgs := []string{"store/sqlite", "store/postgres", "capture", "preview", "grep", "filepager"}
	verbs := []string{"Read", "Save", "Open", "Grep", "Page", "Fork", "Delete", "List"}
	cases := []string{"empty", "one_line", "no_newline", "utf8_boundary", "chunk_boundary", "large", "binary", "crlf"}
	for b.Len() < n {
		pkg := pkgs[r.IntN(len(pkgs))]
		for range 5 + r.IntN(30) {
			name := "Test" + verbs[r.IntN(len(verbs))] + verbs[r.IntN(len(verbs))]
			fmt.Fprintf(&b, "=== RUN   %s\n", name)
			sub := r.IntN(8)
			for c := range sub {
				fmt.Fprintf(&b, "=== RUN   %s/%s\n", name, cases[c])
				if r.IntN(6) == 0 {
					fmt.Fprintf(&b, "    %s_test.go:%d: offset %d: read %d bytes\n", verbs[r.IntN(len(verbs))], 20+r.IntN(900), r.IntN(1<<20), r.IntN(4097))
				}
			}
			for c := range sub {
				fmt.Fprintf(&b, "    --- PASS: %s/%s (%.2fs)\n", name, cases[c], float64(r.IntN(3))/100)
			}
			if r.IntN(40) == 0 {
				fmt.Fprintf(&b, "    %s_test.go:%d: got %q, want %q\n--- FAIL: %s (%.2fs)\n", verbs[r.IntN(len(verbs))], r.IntN(900), "line 9", "line 10", name, r.Float64())
				continue
			}
			fmt.Fprintf(&b, "--- PASS: %s (%.2fs)\n", name, float64(r.IntN(50))/100)
		}
		fmt.Fprintf(&b, "PASS\nok  \tgithub.com/scrollback-dev/scrollback/%s\t%.3fs\n", pkg, r.Float64()*20)
	}
	return b.Bytes()[:n]
}

// JSONExport is an API's JSON export: an array of records with ids,
// names, timestamps, numbers and nested tags, indented.
func JSONExport(n int) []byte {
	r := rand.New(rand.NewPCG(2, 2))
	type rec struct {
		ID      string    `json:"id"`
		Name    string    `json:"name"`
		Email   string    `json:"email"`
		Created time.Time `json:"created_at"`
		Balance float64   `json:"balance"`
		Active  bool      `json:"active"`
		Tags    []string  `json:"tags"`
	}
	words := []string{"alpha", "beta", "gamma", "delta", "ops", "billing", "eu-west-1", "us-east-2", "admin", "trial"}
	var recs []rec
	size := 0
	for size < n {
		r := rec{
			ID:      fmt.Sprintf("cus_%016x", r.Uint64()),
			Name:    words[r.IntN(len(words))] + " " + words[r.IntN(len(words))],
			Email:   fmt.Sprintf("user%d@example.com", r.IntN(1e6)),
			Created: time.Unix(1.7e9+r.Int64N(1e8), 0).UTC(),
			Balance: float64(r.IntN(1e7)) / 100,
			Active:  r.IntN(2) == 0,
			Tags:    []string{words[r.IntN(len(words))], words[r.IntN(len(words))]},
		}
		recs = append(recs, r)
		size += 230
	}
	out, _ := json.MarshalIndent(recs, "", "  ")
	return out[:min(n, len(out))]
}

// Seq is `seq 1 N`.
func Seq(n int) []byte {
	var b bytes.Buffer
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.Bytes()[:n]
}

// Letters is n bytes of random lowercase letters in lines of about 40,
// different for each seed: text that compresses to about 60%.
func Letters(seed, n int) []byte {
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	b := make([]byte, n)
	for i := range b {
		if r.IntN(40) == 0 {
			b[i] = '\n'
		} else {
			b[i] = 'a' + byte(r.IntN(26))
		}
	}
	return b
}
