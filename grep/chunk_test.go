package grep

import (
	"testing"

	"github.com/scrollback-dev/scrollback/store"
)

// TestChunkSizeIsStores ties grep's read size to the store's chunk size:
// grep aligns its reads to ChunkSize so that each is one stored chunk, and
// does not import store to say so.
func TestChunkSizeIsStores(t *testing.T) {
	if ChunkSize != store.ChunkSize {
		t.Fatalf("grep.ChunkSize = %d, store.ChunkSize = %d: they must agree", ChunkSize, store.ChunkSize)
	}
}
