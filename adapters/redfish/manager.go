package redfish

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/hostforge/hostforge/bmc"
)

// The manager's own network: its NIC (hostname, DHCP) and NetworkProtocol
// (NTP, IPMI, virtual media, insecure protocols).

func (c *client) managerNIC(ctx context.Context, m doc) (doc, error) {
	coll := link(m, "EthernetInterfaces")
	if coll == "" {
		return nil, fmt.Errorf("redfish: manager has no EthernetInterfaces: %w", bmc.ErrUnsupported)
	}
	ds, err := c.members(ctx, coll)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		switch strings.ToLower(str(d, "Id")) {
		case "tohost", "usb0", "usb", "host":
			continue
		}
		return d, nil
	}
	return nil, fmt.Errorf("redfish: no manager NIC: %w", bmc.ErrUnsupported)
}

func protoEnabled(np doc, name string) (bool, bool) {
	p, ok := np[name].(doc)
	if !ok {
		return false, false
	}
	v, ok := p["ProtocolEnabled"].(bool)
	return v, ok
}

func (c *client) ManagerNetwork(ctx context.Context) (bmc.ManagerNetwork, error) {
	var n bmc.ManagerNetwork
	m, err := c.manager(ctx)
	if err != nil {
		return n, err
	}
	nic, err := c.managerNIC(ctx, m)
	if err != nil {
		return n, err
	}
	n.Hostname = str(nic, "HostName")
	if d, ok := nic["DHCPv4"].(doc); ok {
		n.DHCP, _ = d["DHCPEnabled"].(bool)
	}
	npPath := link(m, "NetworkProtocol")
	if npPath == "" {
		return n, fmt.Errorf("redfish: manager has no NetworkProtocol: %w", bmc.ErrUnsupported)
	}
	np, err := c.get(ctx, npPath)
	if err != nil {
		return n, err
	}
	n.NTPEnabled, _ = protoEnabled(np, "NTP")
	if ntp, ok := np["NTP"].(doc); ok {
		for _, s := range asSlice(ntp["NTPServers"]) {
			if s, ok := s.(string); ok && s != "" {
				n.NTPServers = append(n.NTPServers, s)
			}
		}
	}
	n.IPMIOverLAN, _ = protoEnabled(np, "IPMI")
	n.VirtualMedia, _ = protoEnabled(np, "VirtualMedia")
	n.Protocols = map[string]bool{}
	for _, p := range bmc.InsecureProtocols {
		if v, ok := protoEnabled(np, p); ok {
			n.Protocols[p] = v
		}
	}
	return n, nil
}

func (c *client) SetManagerNetwork(ctx context.Context, p bmc.NetworkPatch) error {
	m, err := c.manager(ctx)
	if err != nil {
		return err
	}
	if p.Hostname != nil || p.DHCP != nil {
		nic, err := c.managerNIC(ctx, m)
		if err != nil {
			return err
		}
		body := doc{}
		if p.Hostname != nil {
			body["HostName"] = *p.Hostname
		}
		if p.DHCP != nil {
			body["DHCPv4"] = doc{"DHCPEnabled": *p.DHCP}
		}
		if _, err := c.write(ctx, http.MethodPatch, str(nic, "@odata.id"), body); err != nil {
			return err
		}
	}
	body := doc{}
	if p.NTPEnabled != nil || p.NTPServers != nil {
		ntp := doc{}
		if p.NTPEnabled != nil {
			ntp["ProtocolEnabled"] = *p.NTPEnabled
		}
		if p.NTPServers != nil {
			ntp["NTPServers"] = p.NTPServers
		}
		body["NTP"] = ntp
	}
	if p.IPMIOverLAN != nil {
		body["IPMI"] = doc{"ProtocolEnabled": *p.IPMIOverLAN}
	}
	if p.VirtualMedia != nil {
		body["VirtualMedia"] = doc{"ProtocolEnabled": *p.VirtualMedia}
	}
	for k, v := range p.Protocols {
		body[k] = doc{"ProtocolEnabled": v}
	}
	if len(body) == 0 {
		return nil
	}
	_, err = c.write(ctx, http.MethodPatch, link(m, "NetworkProtocol"), body)
	return err
}
