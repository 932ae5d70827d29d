package filepager

import (
	"hash/fnv"
	"os"
	"strconv"
)

// fileStamp is the version of the file fi describes, for its line index:
// a hash of its modification time and, where the system has them
// (statStamp), its change time, inode and device. The modification time
// alone can be put back after a rewrite (cp -p, rsync -t, touch -d), so
// that a same-size rewrite would keep the old index and locate lines
// wrong; the change time moves on every write and cannot be set.
func fileStamp(fi os.FileInfo) int64 {
	h := fnv.New64a()
	h.Write(strconv.AppendInt(nil, fi.ModTime().UnixNano(), 10))
	for _, v := range statStamp(fi) {
		h.Write([]byte{0})
		h.Write(strconv.AppendUint(nil, v, 10))
	}
	return int64(h.Sum64())
}
