package store_test

import (
	"fmt"
	"strings"

	"github.com/scrollback-dev/scrollback/store"
)

// Ids are made by the store (at least 96 random bits after a prefix that
// says what they name) and checked before any lookup: an id that is not
// one is refused without a query.
func ExampleValidID() {
	id := store.NewID(store.CopyPrefix)
	fmt.Println(strings.HasPrefix(id, "out_"), store.ValidID(store.CopyPrefix, id))
	fmt.Println(store.ValidID(store.CopyPrefix, "out_../../etc/passwd"))
	fmt.Println(store.ValidID(store.SessionPrefix, id))
	// Output:
	// true true
	// false
	// false
}
