package extensions

import "encoding/json"

// Payload types: the object each stage hands its tasks, with the JSON
// names of the specification's examples. Values that may be null are
// pointers (a nil pointer encodes as null, as MetalSoft sends it); lists
// encode as [] when empty and null when nil. Objects whose shape the
// specification does not show are json.RawMessage.

// ServerPayload is the payload of serverRegistered and serverDecommissioned.
type ServerPayload struct {
	Server Server `json:"server"`
}

// Server is the server object.
type Server struct {
	AdministrationState            *string             `json:"administrationState"`
	BDKDebug                       *int                `json:"bdkDebug"`
	BIOSInfo                       *BIOSInfo           `json:"biosInfo"`
	BMCMacAddress                  *string             `json:"bmcMacAddress"`
	BootLastUpdateTimestamp        *string             `json:"bootLastUpdateTimestamp"`
	BootingCustomISOInProgress     *int                `json:"bootingCustomIsoInProgress"`
	ChassisRackID                  *int                `json:"chassisRackId"`
	CustomInfo                     json.RawMessage     `json:"customInfo"`
	DatacenterName                 *string             `json:"datacenterName"`
	DiskCount                      *int                `json:"diskCount"`
	Disks                          []ServerDisk        `json:"disks"`
	ExtensionInfo                  json.RawMessage     `json:"extensionInfo"`
	GPUCount                       *int                `json:"gpuCount"`
	GPUInfo                        []json.RawMessage   `json:"gpuInfo"`
	InstanceCustomInfo             json.RawMessage     `json:"instanceCustomInfo"`
	Interfaces                     []ServerInterface   `json:"interfaces"`
	InventoryID                    *string             `json:"inventoryId"`
	IPMICredentialsNeedUpdate      *int                `json:"ipmiCredentialsNeedUpdate"`
	IPMIVersion                    *string             `json:"ipmiVersion"`
	IsBasicCampusEndpoint          *int                `json:"isBasicCampusEndpoint"`
	JobInfo                        *JobInfo            `json:"jobInfo"`
	Links                          []json.RawMessage   `json:"links"`
	ManagementAddress              *string             `json:"managementAddress"`
	MgmtSNMPPasswordEncrypted      *string             `json:"mgmtSnmpPasswordEncrypted,omitempty"`
	MgmtSNMPPort                   *int                `json:"mgmtSnmpPort"`
	Model                          *string             `json:"model"`
	PasswordEncrypted              *string             `json:"passwordEncrypted,omitempty"`
	PowerStatus                    *string             `json:"powerStatus"`
	PowerStatusLastUpdateTimestamp *string             `json:"powerStatusLastUpdateTimestamp"`
	ProcessorCoreCount             *int                `json:"processorCoreCount"`
	ProcessorCoreMhz               *int                `json:"processorCoreMhz"`
	ProcessorCount                 *int                `json:"processorCount"`
	ProcessorCPUMark               *int                `json:"processorCpuMark"`
	ProcessorName                  *string             `json:"processorName"`
	ProcessorThreads               *int                `json:"processorThreads"`
	RackName                       *string             `json:"rackName"`
	RackPositionLowerUnit          *int                `json:"rackPositionLowerUnit"`
	RackPositionUpperUnit          *int                `json:"rackPositionUpperUnit"`
	RAMGbytes                      *int                `json:"ramGbytes"`
	RegisteredTimestamp            *string             `json:"registeredTimestamp"`
	RequiresManualCleaning         *int                `json:"requiresManualCleaning"`
	RequiresReRegister             *int                `json:"requiresReRegister"`
	ResourcePoolID                 *int                `json:"resourcePoolId"`
	Revision                       *int                `json:"revision"`
	SerialNumber                   *string             `json:"serialNumber"`
	ServerAllocationTimestamp      *string             `json:"serverAllocationTimestamp"`
	ServerCapacityMbps             *int                `json:"serverCapacityMbps"`
	ServerClass                    *string             `json:"serverClass"`
	ServerCleanupPolicyID          *int                `json:"serverCleanupPolicyId"`
	ServerComments                 *string             `json:"serverComments"`
	ServerCreatedTimestamp         *string             `json:"serverCreatedTimestamp"`
	ServerDHCPStatus               *string             `json:"serverDhcpStatus"`
	ServerDiskCount                *int                `json:"serverDiskCount"`
	ServerDiskWipe                 *int                `json:"serverDiskWipe"`
	ServerID                       *int                `json:"serverId"`
	ServerIsProduction             *int                `json:"serverIsProduction"`
	ServerMetricsMetadata          *ServerMetrics      `json:"serverMetricsMetadata"`
	ServerStatus                   *string             `json:"serverStatus"`
	ServerSupportsOOBProvisioning  *int                `json:"serverSupportsOobProvisioning"`
	ServerSupportsSOL              *int                `json:"serverSupportsSol"`
	ServerSupportsVirtualMedia     *int                `json:"serverSupportsVirtualMedia"`
	ServerTypeID                   *int                `json:"serverTypeId"`
	ServerUUID                     *string             `json:"serverUUID"`
	SiteID                         *int                `json:"siteId"`
	StorageControllers             []StorageController `json:"storageControllers"`
	Submodel                       *string             `json:"submodel"`
	SupportsFCProvisioning         *int                `json:"supportsFcProvisioning"`
	Tags                           []string            `json:"tags"`
	Username                       *string             `json:"username"`
	Vendor                         *string             `json:"vendor"`
	VendorInfo                     *VendorInfo         `json:"vendorInfo"`
	VendorSKUID                    *string             `json:"vendorSkuId"`
	VNCPasswordEncrypted           *string             `json:"vncPasswordEncrypted,omitempty"`
	VNCPort                        *int                `json:"vncPort"`

	// hostforge's additions (absent from MetalSoft's payloads).
	NetBoxDevice  string `json:"netboxDevice,omitempty"`
	IronicNode    string `json:"ironicNode,omitempty"`
	PlatformClass string `json:"platformClass,omitempty"`
}

// BIOSInfo is the system firmware.
type BIOSInfo struct {
	Vendor  string `json:"vendor"`
	Version string `json:"version"`
}

// JobInfo references MetalSoft's job graph.
type JobInfo struct {
	JobGroupID *int `json:"jobGroupId"`
	JobID      *int `json:"jobId"`
}

// ServerMetrics is serverMetricsMetadata.
type ServerMetrics struct {
	Fans         []json.RawMessage `json:"fans"`
	Temperatures []Temperature     `json:"temperatures"`
}

// Temperature is one sensor (Redfish's names, as MetalSoft passes them on).
type Temperature struct {
	Label                  string          `json:"Label"`
	Name                   string          `json:"Name"`
	Number                 int             `json:"Number"`
	OEM                    json.RawMessage `json:"Oem"`
	PhysicalContext        string          `json:"PhysicalContext"`
	Units                  string          `json:"Units"`
	UpperThresholdCritical *float64        `json:"UpperThresholdCritical"`
	UpperThresholdFatal    *float64        `json:"UpperThresholdFatal"`
}

// StorageController is a RAID or HBA controller.
type StorageController struct {
	Description string                   `json:"description"`
	ID          int                      `json:"id"`
	Label       string                   `json:"label"`
	Mode        string                   `json:"mode"`
	Name        string                   `json:"name"`
	Options     StorageControllerOptions `json:"options"`
	ServerID    int                      `json:"serverId"`
}

// StorageControllerOptions lists what a controller supports.
type StorageControllerOptions struct {
	ControllerModesSupported []string `json:"controllerModesSupported"`
	RAIDTypesSupported       []string `json:"raidTypesSupported"`
}

// VendorInfo names the BMC.
type VendorInfo struct {
	Management string `json:"management"`
	Version    string `json:"version"`
}

// ServerDisk is one disk. The specification's example lists none; the
// names follow MetalSoft's server disk record (serverDisk*).
type ServerDisk struct {
	ServerDiskID     *int   `json:"serverDiskId"`
	ServerDiskModel  string `json:"serverDiskModel"`
	ServerDiskType   string `json:"serverDiskType"`
	ServerDiskVendor string `json:"serverDiskVendor"`
	ServerDiskStatus string `json:"serverDiskStatus"`
	ServerDiskSerial string `json:"serverDiskSerial"`
	ServerDiskSizeGB int    `json:"serverDiskSizeGb"`
	// ServerDiskName is hostforge's addition: the kernel name (sda, nvme0n1).
	ServerDiskName string `json:"serverDiskName,omitempty"`
}

// ServerInterface is one network interface. The specification's example
// lists none; the names follow MetalSoft's server interface record.
type ServerInterface struct {
	ServerInterfaceIndex                      int    `json:"serverInterfaceIndex"`
	ServerInterfaceMacAddress                 string `json:"serverInterfaceMacAddress"`
	ServerInterfaceCapacityMbps               int    `json:"serverInterfaceCapacityMbps"`
	NetworkEquipmentIdentifierString          string `json:"networkEquipmentIdentifierString"`
	NetworkEquipmentInterfaceIdentifierString string `json:"networkEquipmentInterfaceIdentifierString"`
	// ServerInterfaceName is hostforge's addition: the interface's name in NetBox.
	ServerInterfaceName string `json:"serverInterfaceName,omitempty"`
}

// NetworkDevicePayload is the payload of switchRegistered and switchDecommissioned.
type NetworkDevicePayload struct {
	NetworkDevice NetworkDevice `json:"networkDevice"`
}

// NetworkDevice is the networkDevice object.
type NetworkDevice struct {
	ID                                string          `json:"id"`
	Revision                          int             `json:"revision"`
	Status                            string          `json:"status"`
	SiteID                            int             `json:"siteId"`
	IdentifierString                  string          `json:"identifierString"`
	Description                       string          `json:"description"`
	ChassisIdentifier                 string          `json:"chassisIdentifier"`
	Country                           string          `json:"country"`
	City                              string          `json:"city"`
	DatacenterMeta                    string          `json:"datacenterMeta"`
	DatacenterRoom                    string          `json:"datacenterRoom"`
	DatacenterRack                    string          `json:"datacenterRack"`
	RackPositionUpperUnit             *int            `json:"rackPositionUpperUnit"`
	RackPositionLowerUnit             *int            `json:"rackPositionLowerUnit"`
	ManagementAddress                 string          `json:"managementAddress"`
	ManagementAddressPrefixLength     int             `json:"managementAddressPrefixLength"`
	ManagementAddressGateway          string          `json:"managementAddressGateway"`
	ManagementPort                    int             `json:"managementPort"`
	SyslogEnabled                     int             `json:"syslogEnabled"`
	Username                          string          `json:"username"`
	ManagementPassword                *string         `json:"managementPassword,omitempty"`
	ManagementMacAddress              string          `json:"managementMacAddress"`
	SerialNumber                      string          `json:"serialNumber"`
	Driver                            NamedObject     `json:"driver"`
	Position                          SwitchPosition  `json:"position"`
	OrderIndex                        int             `json:"orderIndex"`
	Tags                              []string        `json:"tags"`
	ReadyForInitialConfiguration      int             `json:"readyForInitialConfiguration"`
	BootstrapReadinessCheckInProgress int             `json:"bootstrapReadinessCheckInProgress"`
	SubnetOOBID                       int             `json:"subnetOobId"`
	SubnetOOBIndex                    int             `json:"subnetOobIndex"`
	RequiresOSInstall                 bool            `json:"requiresOsInstall"`
	BootstrapSkipInitialConfiguration int             `json:"bootstrapSkipInitialConfiguration"`
	BootstrapExpectedPartnerHostname  string          `json:"bootstrapExpectedPartnerHostname"`
	LoopbackAddressIPv4               string          `json:"loopbackAddressIpv4"`
	LoopbackAddressIPv6               string          `json:"loopbackAddressIpv6"`
	ASN                               int64           `json:"asn"`
	VTEPAddressIPv4                   string          `json:"vtepAddressIpv4"`
	VTEPAddressIPv6                   string          `json:"vtepAddressIpv6"`
	MLAGSystemMac                     string          `json:"mlagSystemMac"`
	MLAGDomainID                      int             `json:"mlagDomainId"`
	QuarantineVLAN                    int             `json:"quarantineVlan"`
	VariablesMaterializedForOSAssets  json.RawMessage `json:"variablesMaterializedForOSAssets"`
	SecretsMaterializedForOSAssets    json.RawMessage `json:"secretsMaterializedForOSAssets,omitempty"`
	BootstrapReadinessCheckResult     json.RawMessage `json:"bootstrapReadinessCheckResult"`
	IsGateway                         bool            `json:"isGateway"`
	ExtensionInfo                     json.RawMessage `json:"extensionInfo"`
	Links                             []Link          `json:"links"`
}

// NamedObject is {"name": ...}.
type NamedObject struct {
	Name string `json:"name"`
}

// SwitchPosition is the switch's role in the fabric.
type SwitchPosition struct {
	Role string `json:"role"`
}

// Link is a hypermedia link.
type Link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

// ServerInstanceRecordSetPayload is the payload of serverInstanceUpdate.
type ServerInstanceRecordSetPayload struct {
	ServerInstanceRecordSet ServerInstanceRecordSet `json:"serverInstanceRecordSet"`
}

// ServerInstanceRecordSet is a server instance's network configuration
// during a deployment.
type ServerInstanceRecordSet struct {
	DeployStatus         string            `json:"deployStatus"`
	DeployType           string            `json:"deployType"`
	DeploymentID         *int              `json:"deploymentId"`
	InstanceIPv4IPRanges []json.RawMessage `json:"instanceIpv4IpRanges"`
	InstanceIPv4IPs      []InstanceIP      `json:"instanceIpv4Ips"`
	InstanceIPv6IPRanges []json.RawMessage `json:"instanceIpv6IpRanges"`
	InstanceIPv6IPs      []InstanceIP      `json:"instanceIpv6Ips"`
	LogicalNetworks      []LogicalNetwork  `json:"logicalNetworks"`
	ServerID             int               `json:"serverId"`
	ServerInstanceID     int               `json:"serverInstanceId"`
	ServiceStatus        string            `json:"serviceStatus"`
	SiteLabel            string            `json:"siteLabel"`
}

// InstanceIP is an address allocated to an instance.
type InstanceIP struct {
	CIDR             string `json:"cidr"`
	Gateway          string `json:"gateway"`
	IP               string `json:"ip"`
	LogicalNetworkID int    `json:"logicalNetworkId"`
	MaskBits         int    `json:"maskBits"`
	Netmask          string `json:"netmask"`
	NetworkAddress   string `json:"networkAddress"`
	Status           string `json:"status"`
}

// LogicalNetwork is one logical network of an instance.
type LogicalNetwork struct {
	Interfaces          []LogicalNetworkInterface `json:"interfaces"`
	IPv4Subnets         []Subnet                  `json:"ipv4Subnets,omitempty"`
	IPv6Subnets         []Subnet                  `json:"ipv6Subnets,omitempty"`
	LogicalNetworkID    int                       `json:"logicalNetworkId"`
	LogicalNetworkLabel string                    `json:"logicalNetworkLabel"`
	LogicalNetworkName  string                    `json:"logicalNetworkName"`
	VLANs               []VLAN                    `json:"vlans"`
}

// LogicalNetworkInterface is a server interface in a logical network.
type LogicalNetworkInterface struct {
	MacAddress        string `json:"macAddress"`
	RedundancyIndex   *int   `json:"redundancyIndex"`
	ServerInterfaceID int    `json:"serverInterfaceId"`
	Tagged            bool   `json:"tagged"`
}

// Subnet is an IPv4 or IPv6 subnet allocation.
type Subnet struct {
	Gateway          string `json:"gateway"`
	GatewayPlacement string `json:"gatewayPlacement"`
	ID               *int   `json:"id,omitempty"`
	NetworkAddress   string `json:"networkAddress"`
	PrefixLength     int    `json:"prefixLength"`
	Scope            Scope  `json:"scope"`
	Status           string `json:"status"`
}

// Scope is where a VLAN or subnet is allocated.
type Scope struct {
	Kind       string `json:"kind"`
	ResourceID int    `json:"resourceId"`
}

// VLAN is a VLAN allocation.
type VLAN struct {
	ID     int    `json:"id"`
	Scope  Scope  `json:"scope"`
	Status string `json:"status"`
	VLANID int    `json:"vlanId"`
}

// DNSZone is the site DNS zone of a DNS record set.
type DNSZone struct {
	ZoneName    string   `json:"zoneName"`
	SOAEmail    string   `json:"soaEmail"`
	NameServers []string `json:"nameServers"`
	TTL         int      `json:"ttl"`
	IsDefault   bool     `json:"isDefault"`
}

// DNSRecord is one DNS record set entry; names carry a terminating dot.
type DNSRecord struct {
	CreatedAt        string   `json:"createdAt,omitempty"`
	CreatedBy        *int     `json:"createdBy,omitempty"`
	ID               int      `json:"id"`
	Status           string   `json:"status"`
	SiteID           int      `json:"siteId"`
	InfrastructureID int      `json:"infrastructureId"`
	ZoneID           int      `json:"zoneId"`
	ZoneName         string   `json:"zoneName"`
	Name             string   `json:"name"`
	Type             string   `json:"type"`
	TTL              int      `json:"ttl"`
	Records          []string `json:"records"`
	Revision         *int     `json:"revision,omitempty"`
	Tags             []string `json:"tags"`
}

// DNSRecordSet is the object of serverInstanceGroupUpdateDNS
// (serverInstanceGroupDNSRecordSet), serverInstanceUpdateDNS
// (serverInstanceDNSRecordSet) and clusterUpdateDNS (clusterDNSRecordSet):
// the zone, the records and, for groups and instances, custom variables.
type DNSRecordSet struct {
	Zone            DNSZone         `json:"zone"`
	Records         []DNSRecord     `json:"records"`
	CustomVariables json.RawMessage `json:"customVariables,omitempty"`
}

// ServerInstanceGroupDNSPayload is the payload of serverInstanceGroupUpdateDNS.
type ServerInstanceGroupDNSPayload struct {
	ServerInstanceGroupDNSRecordSet DNSRecordSet `json:"serverInstanceGroupDNSRecordSet"`
}

// ServerInstanceDNSPayload is the payload of serverInstanceUpdateDNS.
type ServerInstanceDNSPayload struct {
	ServerInstanceDNSRecordSet DNSRecordSet `json:"serverInstanceDNSRecordSet"`
}

// ClusterDNSPayload is the payload of clusterUpdateDNS.
type ClusterDNSPayload struct {
	ClusterDNSRecordSet DNSRecordSet `json:"clusterDNSRecordSet"`
}

// DNSAddress is the address of a server's BMC or a switch's management interface.
type DNSAddress struct {
	Status string `json:"status"`
	IP     string `json:"ip"`
}

// ServerDNSRecordSet is the object of serverCreateDNS and serverDeleteDNS.
type ServerDNSRecordSet struct {
	Zone              DNSZone    `json:"zone"`
	ServerID          int        `json:"serverId"`
	SerialNumber      string     `json:"serialNumber"`
	ManagementAddress string     `json:"managementAddress"`
	Hostname          string     `json:"hostname"`
	FQDN              string     `json:"fqdn"`
	IP                DNSAddress `json:"ip"`
	Operation         string     `json:"operation"`
}

// ServerDNSPayload is the payload of serverCreateDNS and serverDeleteDNS.
type ServerDNSPayload struct {
	ServerDNSRecordSet ServerDNSRecordSet `json:"serverDNSRecordSet"`
}

// SwitchDNSRecordSet is the object of switchCreateDNS and switchDeleteDNS.
type SwitchDNSRecordSet struct {
	Zone              DNSZone    `json:"zone"`
	SwitchID          int        `json:"switchId"`
	ManagementAddress string     `json:"managementAddress"`
	Hostname          string     `json:"hostname"`
	FQDN              string     `json:"fqdn"`
	IP                DNSAddress `json:"ip"`
	Operation         string     `json:"operation"`
}

// SwitchDNSPayload is the payload of switchCreateDNS and switchDeleteDNS.
type SwitchDNSPayload struct {
	SwitchDNSRecordSet SwitchDNSRecordSet `json:"switchDNSRecordSet"`
}

// NewPayload returns a pointer to the payload type of stage, to decode a
// payload into; nil for an unknown stage.
func NewPayload(stage Stage) any {
	switch stage {
	case ServerRegisteredStage, ServerDecommissioned:
		return &ServerPayload{}
	case SwitchRegistered, SwitchDecommissioned:
		return &NetworkDevicePayload{}
	case ServerInstanceUpdate:
		return &ServerInstanceRecordSetPayload{}
	case ServerInstanceGroupUpdateDNS:
		return &ServerInstanceGroupDNSPayload{}
	case ServerInstanceUpdateDNS:
		return &ServerInstanceDNSPayload{}
	case ClusterUpdateDNS:
		return &ClusterDNSPayload{}
	case ServerCreateDNS, ServerDeleteDNS:
		return &ServerDNSPayload{}
	case SwitchCreateDNS, SwitchDeleteDNS:
		return &SwitchDNSPayload{}
	}
	return nil
}
