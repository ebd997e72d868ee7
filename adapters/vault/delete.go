package vault

import (
	"context"
	"fmt"
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
	unlock, err := v.writeLock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
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
	return v.commit(next, fmt.Sprintf("without item %q", name), fmt.Sprintf("deleting item %q", name))
}
