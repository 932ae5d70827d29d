package codemode

import (
	"context"
	"encoding/json"
	"math"
	"runtime/debug"
	"testing"
)

// The soft memory limit is lowered while runs go, to what they may use,
// never raised past the limit set before, and put back when the last run
// ends, however runs overlap.
func TestSoftLimit(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name   string
		before int64   // the limit in force before the runs
		bounds []int64 // runs started in this order, ended in reverse
		lower  bool    // the runs lower the limit
	}{
		{"no limit before", math.MaxInt64, []int64{256 * mib}, true},
		{"overlapping runs", math.MaxInt64, []int64{256 * mib, 64 * mib, 32 * mib}, true},
		{"a program's limit under the runs' needs is kept", 1 * mib, []int64{256 * mib}, false},
		{"a generous program limit is lowered", 1 << 40, []int64{256 * mib, 256 * mib}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(tt.before))
			var releases []func()
			var sum int64
			for _, b := range tt.bounds {
				sum += b
				releases = append(releases, lowerSoftLimit(b))
				got := debug.SetMemoryLimit(-1)
				switch {
				case got > tt.before:
					t.Fatalf("limit %d raised past the one before, %d", got, tt.before)
				case tt.lower && got >= tt.before:
					t.Fatalf("limit %d not lowered from %d", got, tt.before)
				case tt.lower && got < sum+softLimitHeadroom:
					t.Fatalf("limit %d under the runs' bounds %d plus headroom", got, sum)
				case !tt.lower && got != tt.before:
					t.Fatalf("limit %d, want the program's %d kept", got, tt.before)
				}
			}
			for i := len(releases) - 1; i >= 0; i-- {
				releases[i]()
				releases[i]() // a second release changes nothing
				if got := debug.SetMemoryLimit(-1); i > 0 && got > tt.before {
					t.Fatalf("limit %d raised past %d while runs go", got, tt.before)
				}
			}
			if got := debug.SetMemoryLimit(-1); got != tt.before {
				t.Fatalf("limit %d after the runs, want %d back", got, tt.before)
			}
		})
	}
}

// A run with a memory bound puts the limit back when it ends, however it
// ends; a run without one leaves it alone.
func TestRunRestoresSoftLimit(t *testing.T) {
	const before = 1 << 40
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(before))
	for _, tt := range []struct {
		code string
		opts Options
	}{
		{"return 1", Options{}},
		{"throw new Error('x')", Options{}},
		{"return 1", Options{MaxMemory: -1}},
		{"while (true) {}", Options{Timeout: 50e6}},
	} {
		var during int64
		tools := []Tool{{Name: "limit", Call: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			during = debug.SetMemoryLimit(-1)
			return []byte("1"), nil
		}}}
		Run(context.Background(), "tools.limit({});\n"+tt.code, tools, tt.opts)
		if tt.opts.MaxMemory >= 0 && during >= before {
			t.Errorf("%q: limit %d during the run, want it lowered", tt.code, during)
		}
		if tt.opts.MaxMemory < 0 && during != before {
			t.Errorf("%q: limit %d during an unbounded run, want %d", tt.code, during, before)
		}
		if got := debug.SetMemoryLimit(-1); got != before {
			t.Errorf("%q: limit %d after the run, want %d", tt.code, got, before)
		}
	}
}
