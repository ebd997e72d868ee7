package fakes

import "context"

// DeleteItem removes an item (counted as a vault write); an absent item is
// not an error.
func (v *Vault) DeleteItem(ctx context.Context, name string) (err error) {
	if err := v.site.enter(ctx, SysVault, "delete_item", true); err != nil {
		return err
	}
	defer v.site.answer(ctx, SysVault, "delete_item", &err)
	v.Delete(name)
	return nil
}
