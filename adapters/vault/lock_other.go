//go:build !unix

package vault

import (
	"context"
	"errors"
)

// lockFile is unsupported off Unix: the file vault needs flock(2).
func lockFile(context.Context, string) (func(), error) {
	return nil, errors.New("the file vault needs flock(2), which this platform lacks")
}

func syncDir(string) error { return nil }
