package netbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/intent"
)

// Wire shapes: only the fields hostforge reads, so a NetBox release that
// adds fields or choice values (a new interface type, say) still decodes.
// Pointers mark fields whose absence or null means something.

type wChoice struct {
	Value string `json:"value"`
}

type wRef struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	Slug string `json:"slug"`
}

type wIP struct {
	Address string `json:"address"`
}

type wDeviceType struct {
	ID           int            `json:"id"`
	Model        string         `json:"model"`
	Slug         string         `json:"slug"`
	Manufacturer *wRef          `json:"manufacturer"`
	CustomFields map[string]any `json:"custom_fields"`
}

type wDevice struct {
	ID            int             `json:"id"`
	Name          *string         `json:"name"`
	Status        *wChoice        `json:"status"`
	Role          *wRef           `json:"role"`
	DeviceType    *wDeviceType    `json:"device_type"`
	Site          *wRef           `json:"site"`
	Serial        string          `json:"serial"`
	OOBIP         *wIP            `json:"oob_ip"`
	PrimaryIP4    *wIP            `json:"primary_ip4"`
	Tags          []wRef          `json:"tags"`
	CustomFields  map[string]any  `json:"custom_fields"`
	ConfigContext json.RawMessage `json:"config_context"`
}

type wRole struct {
	ID           int            `json:"id"`
	CustomFields map[string]any `json:"custom_fields"`
}

type wInterface struct {
	ID         int      `json:"id"`
	Name       string   `json:"name"`
	Device     *wRef    `json:"device"`
	Type       *wChoice `json:"type"`
	Enabled    *bool    `json:"enabled"`
	MgmtOnly   bool     `json:"mgmt_only"`
	MACAddress *string  `json:"mac_address"`
	PrimaryMAC *struct {
		MACAddress string `json:"mac_address"`
	} `json:"primary_mac_address"`
	LAG           *wRef             `json:"lag"`
	LinkPeers     []json.RawMessage `json:"link_peers"`
	LinkPeersType *string           `json:"link_peers_type"`
}

// wPeer is a cable end as link_peers renders it (BriefInterface,
// BriefFrontPort, BriefCircuitTermination, ...).
type wPeer struct {
	ID      int    `json:"id"`
	Name    string `json:"name"`
	Display string `json:"display"`
	Device  *wRef  `json:"device"`
}

// maxIDsPerRequest bounds the ids of one ?id= filter so the URL stays well
// under common 8 KiB request-line limits.
const maxIDsPerRequest = 100

// invalid is the NETBOX_DATA_INVALID failure for a malformed payload, naming
// the device and the field.
func invalid(device, field, format string, args ...any) error {
	return enrollment.DataInvalid.New("device %s: %s: %s", device, field, fmt.Sprintf(format, args...))
}

// shapeErr turns a decode error into NETBOX_DATA_INVALID naming device and
// field, and passes every other error through with the device named.
func shapeErr(device, what string, err error) error {
	var de *decodeError
	if errors.As(err, &de) {
		field := what
		var te *json.UnmarshalTypeError
		if errors.As(de.err, &te) && te.Field != "" {
			field = what + "." + te.Field
			return invalid(device, field, "is a JSON %s, want %s", te.Value, te.Type)
		}
		return invalid(device, field, "%v", de)
	}
	if _, ok := hostforge.AsFailure(err); ok {
		return err
	}
	return fmt.Errorf("netbox: device %q: reading %s: %w", device, what, err)
}

// Device reads one host's whole intent by device name in a fixed number of
// requests (see the package documentation).
func (c *Client) Device(ctx context.Context, name string) (intent.Device, error) {
	if name == "" {
		return intent.Device{}, fmt.Errorf("netbox: empty device name: %w", hostforge.ErrInvalid)
	}
	// 1. The device, with its rendered config context, tags and custom fields.
	devs, err := list[wDevice](ctx, c, "dcim/devices/", url.Values{"name": {name}})
	if err != nil {
		return intent.Device{}, shapeErr(name, "device", err)
	}
	switch len(devs) {
	case 0:
		return intent.Device{}, fmt.Errorf("netbox: device %q: %w", name, hostforge.ErrNotFound)
	case 1:
	default:
		return intent.Device{}, invalid(name, "name", "%d devices carry this name (in different sites or tenants); enrollment needs it unique", len(devs))
	}
	d := devs[0]
	out, err := mapDevice(name, d)
	if err != nil {
		return intent.Device{}, err
	}

	// 2. Its interfaces, each with lag and link_peers.
	ifs, err := list[wInterface](ctx, c, "dcim/interfaces/", url.Values{"device_id": {strconv.Itoa(d.ID)}})
	if err != nil {
		return intent.Device{}, shapeErr(name, "interfaces", err)
	}
	ifaces, refs, err := mapInterfaces(name, ifs)
	if err != nil {
		return intent.Device{}, err
	}
	out.Interfaces = ifaces

	// 3. What the two answers point at without carrying it: the custom
	// fields of the device type (gpu_type) and the role (device_class),
	// the peer ports' LAG parents and the peer devices' roles — one
	// GraphQL query, or four REST reads where NetBox serves no GraphQL.
	rel, err := c.related(ctx, name, d, refs)
	if err != nil {
		return intent.Device{}, err
	}
	if out.DeviceType.GPUType, err = cfString(name, "device_type.custom_fields.gpu_type", rel.typeFields, "gpu_type"); err != nil {
		return intent.Device{}, err
	}
	if out.Role.DeviceClass, err = cfString(name, "role.custom_fields.device_class", rel.roleFields, "device_class"); err != nil {
		return intent.Device{}, err
	}
	refs.apply(out.Interfaces, rel)
	sort.SliceStable(out.Interfaces, func(a, b int) bool { return intent.NaturalLess(out.Interfaces[a].Name, out.Interfaces[b].Name) })
	return out, nil
}

func mapDevice(name string, d wDevice) (intent.Device, error) {
	switch {
	case d.ID <= 0:
		return intent.Device{}, invalid(name, "id", "missing")
	case d.Status == nil || d.Status.Value == "":
		return intent.Device{}, invalid(name, "status", "missing")
	case d.Role == nil || d.Role.ID <= 0:
		return intent.Device{}, invalid(name, "role", "missing")
	case d.DeviceType == nil || d.DeviceType.ID <= 0:
		return intent.Device{}, invalid(name, "device_type", "missing")
	}
	out := intent.Device{
		ID:     d.ID,
		Name:   name,
		Status: intent.Status(d.Status.Value),
		Serial: d.Serial,
		Role:   intent.Role{Slug: d.Role.Slug, Name: d.Role.Name},
		DeviceType: intent.DeviceType{
			ID: d.DeviceType.ID, Slug: d.DeviceType.Slug, Model: d.DeviceType.Model,
		},
	}
	if d.DeviceType.Manufacturer != nil {
		out.DeviceType.Manufacturer = d.DeviceType.Manufacturer.Name
	}
	if d.Site != nil {
		out.Site = intent.Site{Slug: d.Site.Slug, Name: d.Site.Name}
	}
	if d.OOBIP != nil {
		out.OOBIP = stripPrefix(d.OOBIP.Address)
	}
	if d.PrimaryIP4 != nil {
		out.PrimaryIP4 = stripPrefix(d.PrimaryIP4.Address)
	}
	for _, t := range d.Tags {
		out.Tags = append(out.Tags, t.Slug)
	}
	sort.Strings(out.Tags)
	var err error
	if out.PlatformClass, err = cfString(name, "custom_fields.platform_class", d.CustomFields, "platform_class"); err != nil {
		return intent.Device{}, err
	}
	if out.ConfigContext, err = configContext(name, d.ConfigContext); err != nil {
		return intent.Device{}, err
	}
	return out, nil
}

// configContext decodes the rendered config context: an object, or
// null/absent. Its sections are validated by enrollment.
func configContext(device string, raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, invalid(device, "config_context", "malformed JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(device, "config_context", "is a JSON %s, want an object", jsonKind(v))
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "value"
}

// cfString reads a text custom field: "" when absent or null; any other
// type is malformed data, not an empty value — treating a number as empty
// would let enrollment overwrite a populated platform_class.
func cfString(device, field string, cf map[string]any, key string) (string, error) {
	v, ok := cf[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", invalid(device, field, "is a JSON %s, want a string", jsonKind(v))
	}
	return s, nil
}

func stripPrefix(addr string) string {
	if i := strings.IndexByte(addr, '/'); i >= 0 {
		return addr[:i]
	}
	return addr
}

// peerRef is the first link peer of one host interface.
type peerRef struct {
	kind string
	peer wPeer
}

// peerRefs are the link peers of a host's interfaces (by the interface's
// index in the mapped list) and the ids the lookups need: peer interfaces
// (for their LAG parent) and peer devices (for their role).
type peerRefs struct {
	peers            []*peerRef
	ifIDs, deviceIDs []int
}

// cabled reports whether any interface has a link peer.
func (r peerRefs) cabled() bool { return len(r.ifIDs) > 0 || len(r.deviceIDs) > 0 }

// apply sets each cabled interface's peer, with its LAG parent and its
// device's role from rel.
func (r peerRefs) apply(out []intent.Interface, rel related) {
	for k, ref := range r.peers {
		if ref == nil {
			continue
		}
		p := &intent.Peer{Kind: ref.kind, Port: ref.peer.Name}
		if p.Port == "" {
			p.Port = ref.peer.Display
		}
		if ref.peer.Device != nil {
			p.Device = ref.peer.Device.Name
			p.DeviceRole = rel.peerRole[ref.peer.Device.ID]
		}
		if ref.kind == intent.PeerKindInterface {
			p.PortLAG = rel.peerLAG[ref.peer.ID]
		}
		out[k].Peer = p
	}
}

// mapInterfaces maps the host's interfaces, in NetBox's order, and
// collects their link peers: a peer's own LAG parent and its device's role
// are not in link_peers, and are read with the device type's and role's
// custom fields (related).
func mapInterfaces(device string, ifs []wInterface) ([]intent.Interface, peerRefs, error) {
	out := make([]intent.Interface, 0, len(ifs))
	refs := peerRefs{peers: make([]*peerRef, len(ifs))}
	seenIf, seenDev := map[int]bool{}, map[int]bool{}
	for k, i := range ifs {
		field := "interfaces." + i.Name
		if i.ID <= 0 || i.Name == "" {
			return nil, refs, invalid(device, "interfaces", "an interface has no id or name")
		}
		ii := intent.Interface{ID: i.ID, Name: i.Name, MgmtOnly: i.MgmtOnly, Enabled: i.Enabled == nil || *i.Enabled}
		if i.Type == nil || i.Type.Value == "" {
			return nil, refs, invalid(device, field+".type", "missing")
		}
		ii.Type = i.Type.Value
		switch {
		case i.MACAddress != nil && *i.MACAddress != "":
			ii.MAC = strings.ToLower(*i.MACAddress)
		case i.PrimaryMAC != nil && i.PrimaryMAC.MACAddress != "":
			ii.MAC = strings.ToLower(i.PrimaryMAC.MACAddress)
		}
		if i.LAG != nil {
			ii.LAG = i.LAG.Name
		}
		if len(i.LinkPeers) > 0 {
			kind := ""
			if i.LinkPeersType != nil {
				kind = *i.LinkPeersType
			}
			if kind == "" {
				return nil, refs, invalid(device, field+".link_peers_type", "missing while link_peers is set")
			}
			var p wPeer
			if err := json.Unmarshal(i.LinkPeers[0], &p); err != nil {
				return nil, refs, invalid(device, field+".link_peers", "malformed: %v", err)
			}
			refs.peers[k] = &peerRef{kind: kind, peer: p}
			if kind == intent.PeerKindInterface && !seenIf[p.ID] {
				seenIf[p.ID] = true
				refs.ifIDs = append(refs.ifIDs, p.ID)
			}
			if p.Device != nil && !seenDev[p.Device.ID] {
				seenDev[p.Device.ID] = true
				refs.deviceIDs = append(refs.deviceIDs, p.Device.ID)
			}
		}
		out = append(out, ii)
	}
	return out, refs, nil
}

// listByID lists objects by id, maxIDsPerRequest ids per request.
func listByID[T any](ctx context.Context, c *Client, path string, ids []int, extra url.Values) ([]T, error) {
	var out []T
	for lo := 0; lo < len(ids); lo += maxIDsPerRequest {
		hi := min(lo+maxIDsPerRequest, len(ids))
		q := url.Values{}
		for k, v := range extra {
			q[k] = append([]string(nil), v...)
		}
		for _, id := range ids[lo:hi] {
			q.Add("id", strconv.Itoa(id))
		}
		got, err := list[T](ctx, c, path, q)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// DeviceNames lists every device name (unnamed devices are skipped), sorted.
func (c *Client) DeviceNames(ctx context.Context) ([]string, error) {
	devs, err := list[wDevice](ctx, c, "dcim/devices/", url.Values{"brief": {"true"}})
	if err != nil {
		var de *decodeError
		if errors.As(err, &de) {
			return nil, enrollment.DataInvalid.New("device list: %v", de)
		}
		return nil, fmt.Errorf("netbox: listing devices: %w", err)
	}
	out := make([]string, 0, len(devs))
	for _, d := range devs {
		if d.Name != nil && *d.Name != "" {
			out = append(out, *d.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}
