//go:build unix

package artifact

import (
	"io/fs"
	"syscall"
)

// devIno is the file's device and inode.
func devIno(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino) //nolint:unconvert // the fields' types differ between systems
	}
	return 0, 0
}
