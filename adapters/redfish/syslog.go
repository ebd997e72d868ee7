package redfish

import (
	"context"
	"fmt"
	"net/http"

	"github.com/hostforge/hostforge/bmc"
)

// syslogTarget finds where the vendor keeps remote syslog: iDRAC manager
// attributes, or an Oem Syslog resource (Supermicro, Lenovo).
func (c *client) syslogTarget(ctx context.Context) (string, bool, error) {
	m, err := c.manager(ctx)
	if err != nil {
		return "", false, err
	}
	if c.vendorOf(ctx) == bmc.VendorDell {
		return c.mgr + "/Attributes", true, nil
	}
	if oem, ok := m["Oem"].(doc); ok {
		for _, v := range oem {
			if vm, ok := v.(doc); ok {
				if p := link(vm, "Syslog"); p != "" {
					return p, false, nil
				}
			}
		}
	}
	return "", false, fmt.Errorf("redfish: no syslog resource on this manager: %w", bmc.ErrUnsupported)
}

var dellSyslogKeys = []string{"SysLog.1.Server1", "SysLog.1.Server2", "SysLog.1.Server3"}

func (c *client) SyslogServers(ctx context.Context) ([]string, error) {
	p, dell, err := c.syslogTarget(ctx)
	if err != nil {
		return nil, err
	}
	d, err := c.get(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []string
	if dell {
		a, _ := d["Attributes"].(doc)
		if str(a, "SysLog.1.SysLogEnable") != "Enabled" {
			return nil, nil
		}
		for _, k := range dellSyslogKeys {
			if s := str(a, k); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	if en, _ := d["EnableSyslog"].(bool); en && str(d, "SyslogServer") != "" {
		out = append(out, str(d, "SyslogServer"))
	}
	return out, nil
}

func (c *client) SetSyslogServers(ctx context.Context, servers []string) error {
	p, dell, err := c.syslogTarget(ctx)
	if err != nil {
		return err
	}
	if dell {
		if len(servers) > len(dellSyslogKeys) {
			return bmc.HTTPError(http.StatusBadRequest, fmt.Sprintf("iDRAC keeps at most %d syslog servers, the site names %d", len(dellSyslogKeys), len(servers)))
		}
		a := doc{"SysLog.1.SysLogEnable": "Enabled"}
		for i, k := range dellSyslogKeys {
			a[k] = ""
			if i < len(servers) {
				a[k] = servers[i]
			}
		}
		_, err = c.write(ctx, http.MethodPatch, p, doc{"Attributes": a})
		return err
	}
	if len(servers) > 1 {
		return bmc.HTTPError(http.StatusBadRequest, fmt.Sprintf("this BMC keeps one syslog server, the site names %d", len(servers)))
	}
	body := doc{"EnableSyslog": len(servers) == 1, "SyslogServer": nil}
	if len(servers) == 1 {
		body["SyslogServer"], body["SyslogPortNumber"] = servers[0], 514
	}
	_, err = c.write(ctx, http.MethodPatch, p, body)
	return err
}
