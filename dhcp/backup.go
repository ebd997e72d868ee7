package dhcp

import (
	"bytes"
	"fmt"
	"path"
)

// BackupPath is where a change keeps the host's last accepted file while
// the change is in flight: ".<name>.hostforge-backup" beside it. A hidden
// name that matches neither "*.conf" nor "*.json", so no include pattern
// picks it up. The backup exists only between the moment a change starts
// and the moment the service runs the new file (or the rollback restored
// the old one); one that outlives its change says the change did not
// finish, and the next Configure of that host restores or completes it
// instead of trusting a matching hash.
func BackupPath(file string) string {
	return path.Join(path.Dir(file), "."+path.Base(file)+".hostforge-backup")
}

// A backup is one header line, then the previous file's bytes verbatim:
//
//	# hostforge DHCP backup v1: present\n<content>
//	# hostforge DHCP backup v1: absent\n
//
// "absent" records that the host had no file, so a rollback removes the
// new one.
const (
	backupPresent = "# hostforge DHCP backup v1: present\n"
	backupAbsent  = "# hostforge DHCP backup v1: absent\n"
)

func encodeBackup(prev []byte, existed bool) []byte {
	if !existed {
		return []byte(backupAbsent)
	}
	return append([]byte(backupPresent), prev...)
}

func decodeBackup(b []byte) (prev []byte, existed bool, err error) {
	switch {
	case bytes.HasPrefix(b, []byte(backupPresent)):
		return b[len(backupPresent):], true, nil
	case bytes.Equal(b, []byte(backupAbsent)):
		return nil, false, nil
	}
	head, _, _ := bytes.Cut(b, []byte("\n"))
	if len(head) > 60 {
		head = head[:60]
	}
	return nil, false, fmt.Errorf("not a hostforge DHCP backup (first line %q)", head)
}
