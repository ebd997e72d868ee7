package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hostforge/hostforge/clock"

	adapter "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

// The scenario: M hosts from nothing to an available Ironic node on
// fake-hardware, without inspection. Every side issues the same writes per
// node — the ones hostforge's phases issue for such a host:
//
//	POST /v1/nodes                      (driver, interfaces, driver_info, properties, resource_class)
//	POST /v1/ports  × NICs              (first PXE, local_link_connection)
//	PUT  /v1/nodes/{id}/states/provision  manage   → wait manageable
//	PUT  /v1/nodes/{id}/states/power      power on → wait power on
//	PATCH /v1/nodes/{id}                (per-host credentials, re-asserted)
//	PUT  /v1/nodes/{id}/traits          (HW_ARCH_X86_64)
//	PUT  /v1/nodes/{id}/states/provision  provide  → wait available
//
// and differ only in how they wait and how they retry a NodeLocked 409.

// ironicSettings is the hosts' config-context ironic_settings.
var ironicSettings = map[string]any{
	"driver": ironic.DriverFakeHardware, "interface_type": "25gbase-x-sfp28",
	"interfaces":     map[string]any{"inspect": "fake", "raid": "fake", "network": "noop"},
	"resource_class": "baremetal", "cpu_arch": "x86_64",
	"capabilities": map[string]any{"boot_mode": "uefi"},
}

// benchNode is one node as the loop and openstacksdk create it: the same
// body hostforge's phases send for the fake host.
type benchNode struct {
	Name          string            `json:"name"`
	Driver        string            `json:"driver"`
	Interfaces    map[string]string `json:"interfaces"`
	DriverInfo    map[string]any    `json:"driver_info"`
	Properties    map[string]any    `json:"properties"`
	ResourceClass string            `json:"resource_class"`
	Ports         []ironic.Port     `json:"ports"`
	// Patch re-asserts the per-host credentials, as the prelude does.
	Patch  []ironic.PatchOp `json:"patch"`
	Traits []string         `json:"traits"`
}

// newSite builds the fake site (NetBox, vault) of one side's run: m hosts
// named prefix-NN with two frontend NICs each, no bond.
func newSite(prefix string, m int) *fakes.Site {
	site := fakes.NewSite()
	for i := 0; i < m; i++ {
		site.AddHost(fakes.HostSpec{Name: fmt.Sprintf("%s-%02d", prefix, i), NoBond: true, ConfigContext: map[string]any{"ironic_settings": ironicSettings}})
	}
	return site
}

// benchNodes renders the site's hosts as the loop and openstacksdk create them.
func benchNodes(ctx context.Context, site *fakes.Site) ([]benchNode, error) {
	var out []benchNode
	for _, name := range site.HostNames() {
		h, _ := site.Host(name)
		cred, err := ironic.VaultCredentials{Vault: site.Vault}.BMCCredential(ctx, ironic.NodeSpec{Name: name, CredentialItem: fakes.AdminItem(name)})
		if err != nil {
			return nil, err
		}
		n := benchNode{
			Name: name, Driver: ironic.DriverFakeHardware,
			Interfaces:    map[string]string{"inspect": "fake", "raid": "fake", "network": "noop"},
			DriverInfo:    map[string]any{"redfish_address": "https://" + h.OOBIP, "redfish_username": cred.Username, "redfish_password": cred.Password},
			Properties:    map[string]any{"cpu_arch": "x86_64", "capabilities": "boot_mode:uefi"},
			ResourceClass: "baremetal",
			Patch:         []ironic.PatchOp{ironic.Add("/driver_info/redfish_username", cred.Username), ironic.Add("/driver_info/redfish_password", cred.Password)},
			Traits:        []string{ironic.ArchTrait("x86_64")},
		}
		for i, nic := range h.NICs {
			n.Ports = append(n.Ports, ironic.Port{Address: strings.ToLower(nic.MAC), PXEEnabled: i == 0,
				LocalLinkConnection: map[string]string{"switch_id": ironic.PlaceholderSwitchID, "port_id": nic.Port, "switch_info": nic.Switch}})
		}
		out = append(out, n)
	}
	return out, nil
}

// cleanup deletes every node whose name starts with prefix (directly, not
// through the proxy: it is not part of any side's figures).
func cleanup(ctx context.Context, c *adapter.Client, names []string) error {
	for _, name := range names {
		deadline := time.Now().Add(time.Minute)
		for {
			err := c.DeleteNode(ctx, name)
			if err == nil || isNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("deleting node %s: %w", name, err)
			}
			if err := (clock.Real{}).Sleep(ctx, 100*time.Millisecond); err != nil {
				return err
			}
		}
	}
	return nil
}

// classes routes every bench host (CPU_BAREMETAL) to the real Ironic.
var classes = map[string]string{intent.ClassCPUBaremetal: "ironic"}
