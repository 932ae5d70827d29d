package scrollback_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/capture"
)

// TestRunCodeValueCutByCopyCap: a return value longer than the copy cap
// (Options.Capture.Copy, which a Go caller may set below the preview
// budget) is cut to it; what is left then fits the preview budget, but it is
// not the whole result. It must be shown as a cut result is, as Retain and
// RunCommand show one: truncated, retained, with a footer naming the copy.
// Before, it came back as truncated=false, recovery "not_needed", no
// output_id and no word in the preview that anything was dropped.
func TestRunCodeValueCutByCopyCap(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, filepath.Join(t.TempDir(), "scrollback.db"))
	for _, tc := range []struct {
		copyCap int64
		value   int
	}{
		{512, 100000},
		{16 << 10, 100000},
		{16 << 10, 16<<10 + 1},
	} {
		t.Run(fmt.Sprintf("cap %d value %d", tc.copyCap, tc.value), func(t *testing.T) {
			sess, err := scrollback.New(st, scrollback.Options{Capture: capture.Limits{Copy: tc.copyCap}}).NewSession(ctx, scrollback.LocalOwner)
			if err != nil {
				t.Fatal(err)
			}
			res, err := sess.RunCode(ctx, scrollback.RunCodeInput{Code: fmt.Sprintf("return 'x'.repeat(%d)", tc.value)})
			if err != nil || res.Error != nil {
				t.Fatalf("RunCode: %v, %v", err, res.Error)
			}
			if !res.Truncated || res.Complete || res.Recovery != scrollback.RecoveryAvailable || res.OutputID == "" ||
				!strings.Contains(res.Preview, res.OutputID) || len(res.Preview) >= tc.value {
				t.Errorf("a value cut at the copy cap: truncated %v complete %v recovery %q id %q, preview of %d bytes:\n%.600s",
					res.Truncated, res.Complete, res.Recovery, res.OutputID, len(res.Preview), res.Preview)
			}
			if tc.value <= scrollback.PreviewBudget {
				return // Retain shows a result within the budget whole
			}
			// Retain shows the same value the same way.
			sh := sess.Retain(ctx, scrollback.RetainInput{Tool: "t", Data: []byte(strings.Repeat("x", tc.value)), Complete: true})
			if !sh.Truncated || sh.Complete || sh.Recovery != scrollback.RecoveryAvailable {
				t.Errorf("Retain: truncated %v complete %v recovery %q", sh.Truncated, sh.Complete, sh.Recovery)
			}
		})
	}
}
