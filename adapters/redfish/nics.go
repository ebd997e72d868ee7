package redfish

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
)

// Host NIC link state, for the Ironic link guard.

func (c *client) HostNICs(ctx context.Context) ([]bmc.HostNIC, error) {
	s, err := c.system(ctx)
	if err != nil {
		return nil, err
	}
	p := link(s, "EthernetInterfaces")
	if p == "" {
		return nil, fmt.Errorf("redfish: system has no EthernetInterfaces: %w", bmc.ErrUnsupported)
	}
	ds, err := c.members(ctx, p)
	if errors.Is(err, hostforge.ErrNotFound) {
		return nil, fmt.Errorf("redfish: %s: %w", p, bmc.ErrUnsupported)
	}
	if err != nil {
		return nil, err
	}
	var out []bmc.HostNIC
	for _, d := range ds {
		mac := str(d, "MACAddress")
		if mac == "" || strings.EqualFold(str(d, "Id"), "ToManager") {
			continue
		}
		out = append(out, bmc.HostNIC{MAC: mac, LinkStatus: str(d, "LinkStatus")})
	}
	return out, nil
}
