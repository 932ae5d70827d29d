package eval

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Checker checks a final answer. Exactly one of Number, Exact and Regex is
// set; Not may be added to any of them.
type Checker struct {
	// Number: the answer contains this number (thousands separators and a
	// leading sign allowed), compared as a number.
	Number string `json:"number,omitempty"`
	// Exact: the answer contains this text as a whole token: not inside a
	// longer word or number.
	Exact string `json:"exact,omitempty"`
	// Regex: the answer matches this regular expression (case-insensitive).
	Regex string `json:"regex,omitempty"`
	// Not: the answer must not match this regular expression
	// (case-insensitive).
	Not string `json:"not,omitempty"`

	re, not *regexp.Regexp
	num     float64
}

func (c *Checker) compile() error {
	n := 0
	for _, s := range []string{c.Number, c.Exact, c.Regex} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return errors.New("give exactly one of number, exact and regex")
	}
	var err error
	switch {
	case c.Number != "":
		if c.num, err = strconv.ParseFloat(c.Number, 64); err != nil {
			return fmt.Errorf("number %q: %w", c.Number, err)
		}
	case c.Exact != "":
		c.re = regexp.MustCompile(`(^|[^\p{L}\p{N}_])` + regexp.QuoteMeta(c.Exact) + `($|[^\p{L}\p{N}_])`)
	default:
		if c.re, err = regexp.Compile("(?is)" + c.Regex); err != nil {
			return fmt.Errorf("regex: %w", err)
		}
	}
	if c.Not != "" {
		if c.not, err = regexp.Compile("(?is)" + c.Not); err != nil {
			return fmt.Errorf("not: %w", err)
		}
	}
	return nil
}

// numberRE finds numbers in an answer: 48,213.55, -7, 1e3 are read as
// 48213.55, -7 and 1000.
var numberRE = regexp.MustCompile(`[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?`)

// Check reports whether answer passes, and if not, why.
func (c *Checker) Check(answer string) (bool, string) {
	if c.not != nil {
		if m := c.not.FindString(answer); m != "" {
			return false, fmt.Sprintf("the answer says %q, which a right answer does not", m)
		}
	}
	switch {
	case c.Number != "":
		for _, m := range numberRE.FindAllString(answer, -1) {
			if v, err := strconv.ParseFloat(strings.ReplaceAll(m, ",", ""), 64); err == nil && closeTo(v, c.num) {
				return true, ""
			}
		}
		return false, "the answer does not contain the number " + c.Number
	case c.Exact != "":
		if c.re.MatchString(answer) {
			return true, ""
		}
		return false, fmt.Sprintf("the answer does not contain %q", c.Exact)
	default:
		if c.re.MatchString(answer) {
			return true, ""
		}
		return false, "the answer does not match /" + c.Regex + "/"
	}
}

func closeTo(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}
