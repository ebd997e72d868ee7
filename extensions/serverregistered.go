package extensions

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/verify"
)

// ServerRegistered is the serverRegistered event hostforge fires when an
// enrollment run succeeds: the server object mapped from the NetBox intent
// and the inspection inventory (Ironic's inventory document, as
// verify.ParseInventory reads it) of the Ironic node the host became.
//
// Its ID is "serverRegistered/<run>": the event's source is the enrollment
// run, so the same run's dispatch fired again (a restarted worker) is the
// same event and delivers only what did not succeed, and a later run that
// registers the host again is a new event, which receivers must not drop
// as a duplicate. The payload holds no secret: no credentials are mapped.
func ServerRegistered(run string, dev intent.Device, inventory []byte, node string) (Event, error) {
	inv, err := verify.ParseInventory(inventory)
	if err != nil {
		return Event{}, PayloadInvalid.Wrap(err, "device %s node %s: the inspection inventory cannot be read", dev.Name, node)
	}
	b, err := json.Marshal(ServerPayload{Server: ServerFromIntent(dev, inv, node)})
	if err != nil {
		return Event{}, PayloadInvalid.Wrap(err, "device %s: the server payload cannot be encoded", dev.Name)
	}
	if run == "" {
		return Event{}, EventInvalid.New("device %s: serverRegistered needs the enrollment run that registered it", dev.Name)
	}
	ev, _, err := NewEvent(ServerRegisteredEventID(run), ServerRegisteredStage, b)
	return ev, err
}

// ServerCreateDNSEvent is the serverCreateDNS event of a host an
// enrollment run enrolled: its BMC's record set, once the BMC's hostname
// (the device's name, lower-cased: what the BMC phase sets) and its
// address (NetBox's out-of-band IP) are set. ok is false for a device
// without an out-of-band IP or a name: it has no BMC record set. The
// serverDNSRecordSet maps
//
//	serverId           NetBox device ID
//	serialNumber       NetBox serial (left out when empty)
//	managementAddress  NetBox out-of-band IP, without its prefix length
//	hostname           the BMC's hostname
//	ip                 {status: "allocated", ip: the out-of-band IP}
//	operation          "create"
//	netboxDevice       hostforge's addition: the device's name
//
// zone and fqdn have no source in NetBox and are left out: an extension
// that writes DNS takes its zone from its configVars.
//
// Its ID is "serverCreateDNS/<run>", the enrollment run's.
func ServerCreateDNSEvent(run string, dev intent.Device) (Event, bool, error) {
	host := bmc.Hostname(dev.Name)
	if host == "" || strings.TrimSpace(dev.OOBIP) == "" {
		return Event{}, false, nil
	}
	if run == "" {
		return Event{}, false, EventInvalid.New("device %s: serverCreateDNS needs the enrollment run that enrolled it", dev.Name)
	}
	rs := map[string]any{"serverId": dev.ID, "managementAddress": dev.OOBIP, "hostname": host,
		"ip": map[string]any{"status": "allocated", "ip": dev.OOBIP}, "operation": "create", "netboxDevice": dev.Name}
	put(rs, "serialNumber", dev.Serial)
	b, err := json.Marshal(map[string]any{"serverDNSRecordSet": rs})
	if err != nil {
		return Event{}, false, PayloadInvalid.Wrap(err, "device %s: the serverDNSRecordSet cannot be encoded", dev.Name)
	}
	ev, _, err := NewEvent(string(ServerCreateDNS)+"/"+run, ServerCreateDNS, b)
	return ev, err == nil, err
}

// ServerRegisteredEventID is the event ID of the registration an
// enrollment run made.
func ServerRegisteredEventID(run string) string {
	return string(ServerRegisteredStage) + "/" + run
}

// ServerFromIntent maps a device's NetBox intent and its inspection
// inventory to MetalSoft's server object. The mapping (NetBox first where
// NetBox is the source of truth, the inventory for what only the host
// knows):
//
//	serverId              NetBox device ID
//	serialNumber          inventory system serial, else NetBox serial
//	vendor, model         NetBox device type manufacturer and model, else the inventory's
//	vendorSkuId           inventory product name
//	biosInfo              inventory system manufacturer and firmware (BIOS) version
//	processorName         inventory CPU model
//	processorCount        inventory socket count
//	processorCoreCount    inventory physical cores per socket
//	processorThreads      inventory logical CPU count
//	ramGbytes             inventory physical memory, MiB / 1024, rounded
//	diskCount, serverDiskCount, disks
//	                      inventory disks: serverDiskSerial, serverDiskModel,
//	                      serverDiskVendor, serverDiskSizeGb (bytes / 10^9),
//	                      serverDiskType (HDD, SSD or NVMe), serverDiskName
//	interfaces            NetBox interfaces that are not management-only, in
//	                      NetBox order: serverInterfaceIndex, MAC (NetBox, else
//	                      the inventory's by name), capacity (inventory speed),
//	                      networkEquipment(Interface)IdentifierString (the cable's
//	                      far end), serverInterfaceName
//	managementAddress     NetBox out-of-band IP, else the inventory's BMC address
//	bmcMacAddress         inventory BMC MAC
//	datacenterName        NetBox site slug
//	serverClass           NetBox role slug
//	serverStatus          "available" (the node is schedulable)
//	tags                  NetBox tag slugs
//	netboxDevice, ironicNode, platformClass   hostforge's additions
//
// Every other field is null: hostforge does not know MetalSoft's IDs,
// rack placement or credentials.
func ServerFromIntent(dev intent.Device, inv verify.Inventory, node string) Server {
	s := Server{
		BIOSInfo:           &BIOSInfo{Vendor: inv.SystemVendor.Manufacturer, Version: inv.BIOSVersion},
		Disks:              []ServerDisk{},
		GPUInfo:            []json.RawMessage{},
		Interfaces:         []ServerInterface{},
		Links:              []json.RawMessage{},
		Tags:               append([]string{}, dev.Tags...),
		StorageControllers: []StorageController{},
		NetBoxDevice:       dev.Name,
		IronicNode:         node,
		PlatformClass:      dev.PlatformClass,
	}
	s.ServerID = ptr(dev.ID)
	s.SerialNumber = firstStr(inv.SystemVendor.SerialNumber, dev.Serial)
	s.Vendor = firstStr(dev.DeviceType.Manufacturer, inv.SystemVendor.Manufacturer)
	s.Model = firstStr(dev.DeviceType.Model, inv.SystemVendor.ProductName)
	s.VendorSKUID = firstStr(inv.SystemVendor.ProductName)
	s.ProcessorName = firstStr(inv.CPU.Model)
	s.ProcessorCount = positive(inv.CPU.Sockets)
	if inv.CPU.Cores > 0 && inv.CPU.Sockets > 0 {
		s.ProcessorCoreCount = ptr(inv.CPU.Cores / inv.CPU.Sockets)
	}
	s.ProcessorThreads = positive(inv.CPU.Count)
	if inv.Memory.PhysicalMB > 0 {
		s.RAMGbytes = ptr(int(math.Round(float64(inv.Memory.PhysicalMB) / 1024)))
	}
	for _, d := range inv.Disks {
		s.Disks = append(s.Disks, ServerDisk{ServerDiskModel: d.Model, ServerDiskVendor: d.Vendor, ServerDiskSerial: d.Serial,
			ServerDiskSizeGB: int(d.SizeBytes / 1e9), ServerDiskType: diskType(d), ServerDiskStatus: "active", ServerDiskName: d.Name})
	}
	s.DiskCount, s.ServerDiskCount = ptr(len(s.Disks)), ptr(len(s.Disks))
	for _, i := range dev.Interfaces {
		if i.MgmtOnly {
			continue
		}
		si := ServerInterface{ServerInterfaceIndex: len(s.Interfaces), ServerInterfaceMacAddress: strings.ToLower(i.MAC), ServerInterfaceName: i.Name}
		if it, ok := inv.InterfaceByName(i.Name); ok {
			si.ServerInterfaceCapacityMbps = it.SpeedMbps
			if si.ServerInterfaceMacAddress == "" {
				si.ServerInterfaceMacAddress = it.MAC
			}
		} else if it, ok := inv.InterfaceByMAC(i.MAC); ok && i.MAC != "" {
			si.ServerInterfaceCapacityMbps = it.SpeedMbps
		}
		if i.Peer != nil {
			si.NetworkEquipmentIdentifierString, si.NetworkEquipmentInterfaceIdentifierString = i.Peer.Device, i.Peer.Port
		}
		s.Interfaces = append(s.Interfaces, si)
	}
	s.ManagementAddress = firstStr(dev.OOBIP, inv.BMCAddress)
	s.BMCMacAddress = firstStr(strings.ToLower(inv.BMCMAC))
	s.DatacenterName = firstStr(dev.Site.Slug)
	s.ServerClass = firstStr(dev.Role.Slug)
	s.ServerStatus = ptr("available")
	return s
}

func diskType(d verify.Disk) string {
	switch {
	case strings.HasPrefix(d.Name, "nvme") || strings.Contains(d.ByPath, "nvme"):
		return "NVMe"
	case d.Rotational:
		return "HDD"
	}
	return "SSD"
}

func ptr[T any](v T) *T { return &v }

func positive(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

// firstStr returns the first non-empty value, nil when all are empty.
func firstStr(vals ...string) *string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return &v
		}
	}
	return nil
}
