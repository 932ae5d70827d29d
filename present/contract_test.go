package present_test

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/preview"
)

// TestContractNumbers ties the named constants to the contract's table
// (docs/contract.md, section 1): a number changed on one side and not the
// other fails here.
func TestContractNumbers(t *testing.T) {
	doc, err := os.ReadFile("../docs/contract.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]int{
		"shown when retained":    preview.ShownBudget,
		"what the model is told": present.ToldBudget,
	} {
		m := regexp.MustCompile(`(?m)^\| ` + name + ` \| at most (\d+) KiB`).FindSubmatch(doc)
		if m == nil {
			t.Errorf("the contract has no row %q", name)
			continue
		}
		kib, _ := strconv.Atoi(string(m[1]))
		if got != kib<<10 {
			t.Errorf("%s: the code says %d bytes, the contract %d KiB", name, got, kib)
		}
	}
	if preview.ShownHead+preview.ShownTail >= preview.ShownBudget {
		t.Errorf("the default head (%d) and tail (%d) leave no room for the footer in %d bytes", preview.ShownHead, preview.ShownTail, preview.ShownBudget)
	}
}
