package present_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
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
	row := func(name string) string {
		m := regexp.MustCompile(`(?m)^\| ` + name + ` \|.*$`).Find(doc)
		if m == nil {
			t.Fatalf("the contract has no row %q", name)
		}
		return string(m)
	}
	kib := func(re, line string) int {
		m := regexp.MustCompile(re).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("no %s in the contract's row %q", re, line)
		}
		n, _ := strconv.Atoi(m[1])
		return n << 10
	}
	// What the model is told is a hard limit the code keeps.
	if told := row("what the model is told"); present.ToldBudget != kib(`at most (\d+) KiB`, told) {
		t.Errorf("what the model is told: the code's budget is %d bytes, the contract's row says %q", present.ToldBudget, told)
	}
	// What a retained result shows has a contract maximum and a default
	// chosen by scrollback eval, which the row names.
	shown := row("shown when retained")
	if most := kib(`at most (\d+) KiB`, shown); preview.ShownBudget > most {
		t.Errorf("shown when retained: the default %d bytes is over the contract's %d", preview.ShownBudget, most)
	}
	m := regexp.MustCompile(`([\d,]+) bytes by default`).FindStringSubmatch(shown)
	if m == nil {
		t.Fatalf("no \"N bytes by default\" in the contract's row %q", shown)
	}
	if def, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", "")); preview.ShownBudget != def {
		t.Errorf("shown when retained: the code's default is %d bytes, the contract's row says %q", preview.ShownBudget, shown)
	}
	if preview.ShownHead+preview.ShownTail >= preview.ShownBudget {
		t.Errorf("the default head (%d) and tail (%d) leave no room for the footer in %d bytes", preview.ShownHead, preview.ShownTail, preview.ShownBudget)
	}
}
