package jsonq

import (
	"errors"
	"strings"
	"testing"
)

// {$ENV} is $ENV in object shorthand ({ENV: $ENV}): refused as $ENV is.
func TestEnvShorthandRefused(t *testing.T) {
	for _, filter := range []string{"{$ENV}", "{$ENV: 1}", "[{$ENV}][0].ENV.PATH", "{a: 1, $ENV}"} {
		t.Run(filter, func(t *testing.T) {
			_, err := Compile(filter)
			if !errors.Is(err, ErrFilter) || !strings.Contains(err.Error(), "$ENV") {
				t.Fatalf("err = %v, want $ENV refused", err)
			}
		})
	}
	// A variable of another name in the shorthand still works.
	res, err := run(t, ". as $x | {$x}", "1", Options{Complete: true})
	if err != nil || string(res.Text) != `{"x":1}`+"\n" {
		t.Fatalf("{$x}: got %v, %v", res, err)
	}
}
