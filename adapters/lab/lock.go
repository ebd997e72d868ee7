package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the lab's lock in its directory. A running lab holds an
// exclusive flock on it and has written its PID in it; the file stays
// when the lab stops, which is how a stopped lab is told from a
// directory that never held one.
const LockFile = "lab.lock"

// BusyError is a lab directory another lab is running in.
type BusyError struct {
	Dir string
	// PID is the running lab's process ID (0 when it could not be read).
	PID int
}

func (e *BusyError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("lab: another lab is running in %s", e.Dir)
	}
	return fmt.Sprintf("lab: another lab (PID %d) is running in %s", e.PID, e.Dir)
}

// lock takes dir's lab lock for this process, or returns a *BusyError.
// The lock goes with the file's closing (or the process's end), so a lab
// that was killed leaves no stale lock.
func lock(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid := readPID(f)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &BusyError{Dir: dir, PID: pid}
		}
		return nil, fmt.Errorf("lab: locking %s: %w", dir, err)
	}
	if err := f.Truncate(0); err != nil {
		_ = f.Close()
		return nil, err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return pid
}

// State is what a directory says of its lab.
type State struct {
	// Lab says a lab has run in the directory (it has the lock file).
	Lab bool
	// Running says a lab runs there now, as process PID.
	Running bool
	PID     int
}

// Status reads the state of dir's lab without disturbing a running one.
func Status(dir string) State {
	f, err := os.Open(filepath.Join(dir, LockFile))
	if err != nil {
		return State{}
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return State{Lab: true, Running: errors.Is(err, syscall.EWOULDBLOCK), PID: readPID(f)}
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return State{Lab: true}
}
