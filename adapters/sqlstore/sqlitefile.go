package sqlstore

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/hostforge/hostforge"
)

// StateFileExposed: the SQLite state file, or a journal file beside it,
// can be read or written by group or others.
var StateFileExposed = hostforge.Declare(hostforge.Spec{
	Code:      "STATE_FILE_EXPOSED",
	Phase:     "state",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: false,
	Action:    "The SQLite state file holds scout tasks with presigned URLs, task results and playbook outputs, and group or others can read or write the file the message names: chmod 600 it (and its -wal and -shm files), check who read it meanwhile, then rerun.",
})

// privateSQLiteFile makes sure the SQLite file at path, and the journal
// files beside it, are its owner's alone before the driver opens it: a
// missing file is created with mode 0600 (SQLite gives its -wal and -shm
// files the database file's mode), and a file that group or others can
// read or write is refused with its mode, untouched. In-memory databases
// and URIs are the caller's own business.
func privateSQLiteFile(path string) error {
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		// Created: 0600 whatever the umask (it only removes bits).
		return f.Close()
	case !errors.Is(err, fs.ErrExist):
		return Unavailable.New("sqlite: creating the state file %s: %v", path, errWithoutPath(err))
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) && p != path {
			continue
		}
		if err != nil {
			return Unavailable.New("sqlite: the state file %s: %v", p, errWithoutPath(err))
		}
		if perm := st.Mode().Perm(); perm&0o077 != 0 {
			return StateFileExposed.New("the SQLite state file %s has mode %04o: group or others can read or write it; it must be its owner's alone (chmod 600 %s)", p, perm, p)
		}
	}
	return nil
}
