package vault

import (
	"context"
	"fmt"

	"github.com/hostforge/hostforge"
)

// DeleteItem removes one item, keeping every other item as the file holds
// it now, under the same lock and atomic replace as PutItem. An item the
// vault does not have is not an error, and writes nothing. A retirement
// deletes a host's per-host BMC credential once it archived it, and the
// archive once its retention passed.
func (v *File) DeleteItem(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	unlock, err := lockFile(ctx, lockPath(v.path))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("vault file %s: waiting for the write lock: %w", v.path, ctx.Err())
		}
		return fmt.Errorf("vault file %s: taking the write lock: %v: %w", v.path, err, hostforge.ErrUnavailable)
	}
	defer unlock()
	if err := v.reload(true); err != nil {
		return err
	}
	if _, ok := v.items[name]; !ok {
		return nil
	}
	v.removeStaleTemps()
	next := make(map[string]map[string]string, len(v.items))
	for k, it := range v.items {
		if k != name {
			next[k] = it
		}
	}
	b, err := encode(next)
	if err != nil {
		return fmt.Errorf("vault file %s: encoding without item %q: %v: %w", v.path, name, err, hostforge.ErrInvalid)
	}
	if err := v.replace(b); err != nil {
		return fmt.Errorf("vault file %s: deleting item %q: %v: %w", v.path, name, err, hostforge.ErrUnavailable)
	}
	v.items = next
	v.seen = stamp{}
	return nil
}
