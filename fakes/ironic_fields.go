package fakes

import (
	"fmt"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/ironic"
)

// nodeFieldNames are the names Ironic 2023.1 accepts in a node read's
// ?fields= at API 1.81 (read from a real Ironic: every key of a node but
// created_at, updated_at, links and the sub-resource links, which it
// refuses with 400 "Field X is not a valid field."). The fake keeps only
// some of them; the others are accepted and come back empty.
var nodeFieldNames = map[string]bool{}

func init() {
	for _, f := range strings.Fields(`allocation_uuid automated_clean bios_interface boot_interface boot_mode
		chassis_uuid clean_step conductor conductor_group console_enabled console_interface deploy_interface
		deploy_step description driver driver_info driver_internal_info extra fault inspect_interface
		inspection_finished_at inspection_started_at instance_info instance_uuid last_error lessee maintenance
		maintenance_reason management_interface name network_data network_interface owner power_interface
		power_state properties protected protected_reason provision_state provision_updated_at raid_config
		raid_interface rescue_interface reservation resource_class retired retired_reason secure_boot
		storage_interface target_power_state target_provision_state target_raid_config traits uuid
		vendor_interface`) {
		nodeFieldNames[f] = true
	}
}

// checkNodeFields refuses a name Ironic does not know, as Ironic does.
func checkNodeFields(fields []string) error {
	for _, f := range fields {
		if !nodeFieldNames[strings.TrimSpace(f)] {
			return fmt.Errorf("ironic: 400 Field %s is not a valid field.: %w", f, hostforge.ErrInvalid)
		}
	}
	return nil
}

// selectNodeFields is n with only the named fields (all of them when none
// is named), as a read with ?fields= shows it.
func selectNodeFields(n ironic.Node, fields []string) ironic.Node {
	if len(fields) == 0 {
		return n
	}
	var out ironic.Node
	for _, f := range fields {
		switch f = strings.TrimSpace(f); f {
		case "uuid":
			out.UUID = n.UUID
		case "name":
			out.Name = n.Name
		case "driver":
			out.Driver = n.Driver
		case "provision_state":
			out.ProvisionState = n.ProvisionState
		case "target_provision_state":
			out.TargetProvisionState = n.TargetProvisionState
		case "provision_updated_at":
			out.ProvisionUpdatedAt = n.ProvisionUpdatedAt
		case "power_state":
			out.PowerState = n.PowerState
		case "target_power_state":
			out.TargetPowerState = n.TargetPowerState
		case "maintenance":
			out.Maintenance = n.Maintenance
		case "maintenance_reason":
			out.MaintenanceReason = n.MaintenanceReason
		case "instance_uuid":
			out.InstanceUUID = n.InstanceUUID
		case "reservation":
			out.Reservation = n.Reservation
		case "last_error":
			out.LastError = n.LastError
		case "owner":
			out.Owner = n.Owner
		case "lessee":
			out.Lessee = n.Lessee
		case "resource_class":
			out.ResourceClass = n.ResourceClass
		case "properties":
			out.Properties = n.Properties
		case "driver_info":
			out.DriverInfo = n.DriverInfo
		case "target_raid_config":
			out.TargetRAIDConfig = n.TargetRAIDConfig
		case "traits":
			out.Traits = n.Traits
		default:
			if iface, ok := strings.CutSuffix(f, "_interface"); ok {
				if v, ok := n.Interfaces[iface]; ok {
					if out.Interfaces == nil {
						out.Interfaces = map[string]string{}
					}
					out.Interfaces[iface] = v
				}
			}
		}
	}
	return out
}
