package redfish

import (
	"context"
	"errors"
	"net/http"

	"github.com/hostforge/hostforge/bmc"
)

// DeleteAccount removes an account. BMCs with fixed account slots (iDRAC,
// XCC, MegaRAC: empty slots in the collection, or one of those vendors)
// refuse DELETE; their slot is emptied and disabled with a PATCH. Others
// get a DELETE, and a 405 falls back to the PATCH.
func (c *client) DeleteAccount(ctx context.Context, id string) error {
	_, ds, err := c.accountDocs(ctx)
	if err != nil {
		return err
	}
	p, fixed := "", false
	for _, d := range ds {
		if str(d, "UserName") == "" {
			fixed = true
		}
		if str(d, "Id") == id {
			p = str(d, "@odata.id")
		}
	}
	if p == "" {
		return bmc.HTTPError(http.StatusNotFound, "account "+id+" not found")
	}
	switch c.vendorOf(ctx) {
	case bmc.VendorDell, bmc.VendorLenovo, bmc.VendorAMI:
		fixed = true
	}
	empty := doc{"UserName": "", "Enabled": false}
	if fixed {
		_, err := c.write(ctx, http.MethodPatch, p, empty)
		return err
	}
	_, err = c.write(ctx, http.MethodDelete, p, nil)
	if errors.Is(err, bmc.ErrUnsupported) {
		_, err = c.write(ctx, http.MethodPatch, p, empty)
	}
	return err
}
