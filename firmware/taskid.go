package firmware

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// taskIDBytes is the randomness of an agent task ID: 128 bits, so that a
// host cannot guess the ID of a task before it is offered.
const taskIDBytes = 16

// taskIDPrefix starts every agent task ID.
const taskIDPrefix = ResultScout + "-"

// newTaskID draws an agent task ID from random (crypto/rand when nil):
// "scout-" and 32 hex digits.
func newTaskID(random io.Reader) (string, error) {
	if random == nil {
		random = rand.Reader
	}
	var b [taskIDBytes]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("drawing a task ID: %v", err)
	}
	return taskIDPrefix + hex.EncodeToString(b[:]), nil
}

// isTaskID reports whether id is one newTaskID drew (a record written
// before IDs were random, or left by an upload, holds something else).
func isTaskID(id string) bool {
	h, ok := strings.CutPrefix(id, taskIDPrefix)
	if !ok || len(h) != 2*taskIDBytes {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
