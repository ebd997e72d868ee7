package fakes

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/intent"
)

// NetBoxState is NetBox's data, normalised as NetBox stores it: objects by
// id, related by id. The in-memory fake and the REST emulator both serve it.
type NetBoxState struct {
	NextID        int
	Devices       map[int]*NBDevice
	DeviceTypes   map[int]*NBDeviceType
	Manufacturers map[int]*NBManufacturer
	Roles         map[int]*NBRole
	Sites         map[int]*NBSite
	Interfaces    map[int]*NBInterface
	Cables        map[int]*NBCable
	Tags          map[int]*NBTag
	// Journal holds the devices' journal entries by device id, oldest
	// first (netbox_journal.go).
	Journal map[int][]*NBJournalEntry

	// idx speeds up lookups on large fake fleets; see index.
	idx stateIndex
}

// stateIndex maps device names and device interfaces for lookups. AddDevice
// and AddInterface keep it current; code that edits the maps directly
// changes their sizes, and the index is rebuilt on the next lookup. Renaming
// a device or moving an interface in place is caught by checking every hit.
type stateIndex struct {
	devices, interfaces int
	byName              map[string]*NBDevice
	ifsOf               map[int][]*NBInterface
}

func (x *stateIndex) current(s *NetBoxState) bool {
	return x.byName != nil && x.devices == len(s.Devices) && x.interfaces == len(s.Interfaces)
}

// AddDevice stores a new device.
func (s *NetBoxState) AddDevice(d *NBDevice) {
	ok := s.idx.current(s)
	s.Devices[d.ID] = d
	if ok {
		s.idx.devices++
		s.idx.byName[d.Name] = d
	}
}

// AddInterface stores a new interface.
func (s *NetBoxState) AddInterface(i *NBInterface) {
	ok := s.idx.current(s)
	s.Interfaces[i.ID] = i
	if ok {
		s.idx.interfaces++
		ifs := append(s.idx.ifsOf[i.DeviceID], i)
		sort.Slice(ifs, func(a, b int) bool { return intent.NaturalLess(ifs[a].Name, ifs[b].Name) })
		s.idx.ifsOf[i.DeviceID] = ifs
	}
}

func (s *NetBoxState) index() *stateIndex {
	x := &s.idx
	if x.current(s) {
		return x
	}
	x.devices, x.interfaces = len(s.Devices), len(s.Interfaces)
	x.byName = make(map[string]*NBDevice, len(s.Devices))
	for _, d := range s.Devices {
		x.byName[d.Name] = d
	}
	x.ifsOf = make(map[int][]*NBInterface, len(s.Devices))
	for _, i := range s.Interfaces {
		x.ifsOf[i.DeviceID] = append(x.ifsOf[i.DeviceID], i)
	}
	for id := range x.ifsOf {
		ifs := x.ifsOf[id]
		sort.Slice(ifs, func(a, b int) bool { return intent.NaturalLess(ifs[a].Name, ifs[b].Name) })
	}
	return x
}

// NBDevice is a dcim.device.
type NBDevice struct {
	ID           int
	Name         string
	Status       string
	RoleID       int
	DeviceTypeID int
	SiteID       int
	Serial       string
	OOBIP        string // with prefix length, as NetBox stores it, e.g. "10.0.0.5/24"
	PrimaryIP4   string
	TagIDs       []int
	CustomFields map[string]any
	// ConfigContext is the rendered config context.
	ConfigContext map[string]any
}

// NBDeviceType is a dcim.devicetype.
type NBDeviceType struct {
	ID             int
	ManufacturerID int
	Model          string
	Slug           string
	CustomFields   map[string]any
}

// NBManufacturer is a dcim.manufacturer.
type NBManufacturer struct {
	ID   int
	Name string
	Slug string
}

// NBRole is a dcim.devicerole.
type NBRole struct {
	ID           int
	Name         string
	Slug         string
	CustomFields map[string]any
}

// NBSite is a dcim.site.
type NBSite struct {
	ID   int
	Name string
	Slug string
}

// NBInterface is a dcim.interface.
type NBInterface struct {
	ID       int
	DeviceID int
	Name     string
	Type     string
	MAC      string
	MgmtOnly bool
	Enabled  bool
	LAGID    int // 0 when none
	CableID  int // 0 when uncabled
}

// NBTermination is one end of a cable.
type NBTermination struct {
	ObjectType string // e.g. "dcim.interface", "dcim.frontport"
	ObjectID   int
	// DeviceID and Name describe a termination that is not a dcim.interface
	// (a front port, a circuit termination), which has no NBInterface.
	DeviceID int
	Name     string
}

// NBCable is a dcim.cable.
type NBCable struct {
	ID     int
	Status string
	A, B   []NBTermination
}

// NBTag is an extras.tag.
type NBTag struct {
	ID   int
	Name string
	Slug string
}

func newNetBoxState() *NetBoxState {
	return &NetBoxState{
		NextID:        1,
		Devices:       map[int]*NBDevice{},
		DeviceTypes:   map[int]*NBDeviceType{},
		Manufacturers: map[int]*NBManufacturer{},
		Roles:         map[int]*NBRole{},
		Sites:         map[int]*NBSite{},
		Interfaces:    map[int]*NBInterface{},
		Cables:        map[int]*NBCable{},
		Tags:          map[int]*NBTag{},
		Journal:       map[int][]*NBJournalEntry{},
	}
}

func (s *NetBoxState) id() int { s.NextID++; return s.NextID - 1 }

// DeviceByName returns the device with that name.
func (s *NetBoxState) DeviceByName(name string) *NBDevice {
	if d := s.index().byName[name]; d != nil && d.Name == name && s.Devices[d.ID] == d {
		return d
	}
	// A miss may be a device renamed in place since the index was built.
	for _, d := range s.Devices {
		if d.Name == name {
			s.idx.byName = nil
			return d
		}
	}
	return nil
}

// TagBySlug returns the tag with that slug.
func (s *NetBoxState) TagBySlug(slug string) *NBTag {
	for _, t := range s.Tags {
		if t.Slug == slug {
			return t
		}
	}
	return nil
}

// DeviceInterfaces returns a device's interfaces in natural name order.
func (s *NetBoxState) DeviceInterfaces(deviceID int) []*NBInterface {
	ifs := s.index().ifsOf[deviceID]
	for k, i := range ifs {
		if i.DeviceID != deviceID || s.Interfaces[i.ID] != i || (k > 0 && intent.NaturalLess(i.Name, ifs[k-1].Name)) {
			s.idx.byName = nil // edited in place: rebuild
			ifs = s.index().ifsOf[deviceID]
			break
		}
	}
	return append([]*NBInterface(nil), ifs...)
}

// EnsureTag returns the tag with that slug, creating it when missing.
func (s *NetBoxState) EnsureTag(slug string) *NBTag {
	if t := s.TagBySlug(slug); t != nil {
		return t
	}
	t := &NBTag{ID: s.id(), Name: slug, Slug: slug}
	s.Tags[t.ID] = t
	return t
}

// Intent assembles the recorded intent of one device, as a NetBox client
// reads it.
func (s *NetBoxState) Intent(d *NBDevice) (intent.Device, error) {
	out := intent.Device{
		ID:         d.ID,
		Name:       d.Name,
		Status:     intent.Status(d.Status),
		Serial:     d.Serial,
		OOBIP:      stripPrefix(d.OOBIP),
		PrimaryIP4: stripPrefix(d.PrimaryIP4),
	}
	var err error
	if r := s.Roles[d.RoleID]; r != nil {
		out.Role = intent.Role{Slug: r.Slug, Name: r.Name}
		if out.Role.DeviceClass, err = cfStrict(d.Name, "role.custom_fields.device_class", r.CustomFields, "device_class"); err != nil {
			return intent.Device{}, err
		}
	}
	if dt := s.DeviceTypes[d.DeviceTypeID]; dt != nil {
		out.DeviceType = intent.DeviceType{ID: dt.ID, Slug: dt.Slug, Model: dt.Model}
		if out.DeviceType.GPUType, err = cfStrict(d.Name, "device_type.custom_fields.gpu_type", dt.CustomFields, "gpu_type"); err != nil {
			return intent.Device{}, err
		}
		if m := s.Manufacturers[dt.ManufacturerID]; m != nil {
			out.DeviceType.Manufacturer = m.Name
		}
	}
	if st := s.Sites[d.SiteID]; st != nil {
		out.Site = intent.Site{Slug: st.Slug, Name: st.Name}
	}
	for _, id := range d.TagIDs {
		if t := s.Tags[id]; t != nil {
			out.Tags = append(out.Tags, t.Slug)
		}
	}
	sort.Strings(out.Tags)
	if out.PlatformClass, err = cfStrict(d.Name, "custom_fields.platform_class", d.CustomFields, "platform_class"); err != nil {
		return intent.Device{}, err
	}
	out.ConfigContext = cloneJSON(d.ConfigContext)
	for _, i := range s.DeviceInterfaces(d.ID) {
		ii := intent.Interface{ID: i.ID, Name: i.Name, Type: i.Type, MAC: i.MAC, MgmtOnly: i.MgmtOnly, Enabled: i.Enabled}
		if lag := s.Interfaces[i.LAGID]; lag != nil {
			ii.LAG = lag.Name
		}
		ii.Peer = s.peerOf(i)
		out.Interfaces = append(out.Interfaces, ii)
	}
	return out, nil
}

// peerOf is the far end of an interface's cable.
func (s *NetBoxState) peerOf(i *NBInterface) *intent.Peer {
	c := s.Cables[i.CableID]
	if c == nil {
		return nil
	}
	far := c.B
	for _, t := range c.B {
		if t.ObjectType == intent.PeerKindInterface && t.ObjectID == i.ID {
			far = c.A
		}
	}
	if len(far) == 0 {
		return nil
	}
	t := far[0]
	p := &intent.Peer{Kind: t.ObjectType, Port: t.Name}
	devID := t.DeviceID
	if t.ObjectType == intent.PeerKindInterface {
		if pi := s.Interfaces[t.ObjectID]; pi != nil {
			devID, p.Port = pi.DeviceID, pi.Name
			if lag := s.Interfaces[pi.LAGID]; lag != nil {
				p.PortLAG = lag.Name
			}
		}
	}
	if pd := s.Devices[devID]; pd != nil {
		p.Device = pd.Name
		if r := s.Roles[pd.RoleID]; r != nil {
			p.DeviceRole = r.Slug
		}
	}
	return p
}

func stripPrefix(addr string) string {
	if i := strings.IndexByte(addr, '/'); i >= 0 {
		return addr[:i]
	}
	return addr
}

// cfStrict reads a text custom field as NetBox clients must: null or absent
// is "", a string is itself, anything else is malformed data. Reading a
// number as "" would let enrollment overwrite a populated platform_class.
func cfStrict(device, field string, cf map[string]any, key string) (string, error) {
	switch v := cf[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", intent.DataInvalid.New("device %s: %s: is a %T, want text or null", device, field, v)
	}
}

func cfString(cf map[string]any, key string) string {
	if s, ok := cf[key].(string); ok {
		return s
	}
	return ""
}

// cloneJSON deep-copies a JSON-shaped map so callers cannot alias fake
// state. The copy is what the map reads back as from JSON (numbers are
// float64, typed maps and slices generic), made without encoding it.
func cloneJSON(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return copyJSON(m).(map[string]any)
}

// copyJSON copies a JSON value as a round trip through encoding/json
// would: maps and slices of JSON values are copied, numbers become float64,
// and anything else (a typed slice, a struct, a float32, text that is not
// UTF-8) goes through encoding/json itself.
func copyJSON(v any) any {
	switch x := v.(type) {
	case nil, bool:
		return x
	case string:
		if utf8.ValidString(x) {
			return x
		}
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return x
		}
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case uint:
		return float64(x)
	case uint64:
		return float64(x)
	case uint32:
		return float64(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if !utf8.ValidString(k) {
				return roundTrip(v)
			}
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyJSON(e)
		}
		return out
	}
	return roundTrip(v)
}

func roundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakes: value is not JSON: %v", err))
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// Clone deep-copies the state (custom fields and config contexts as JSON
// reads them back), for snapshots that must not alias it.
func (s *NetBoxState) Clone() *NetBoxState {
	out := newNetBoxState()
	out.NextID = s.NextID
	for id, d := range s.Devices {
		c := *d
		c.TagIDs = append([]int(nil), d.TagIDs...)
		c.CustomFields, c.ConfigContext = cloneJSON(d.CustomFields), cloneJSON(d.ConfigContext)
		out.Devices[id] = &c
	}
	for id, t := range s.DeviceTypes {
		c := *t
		c.CustomFields = cloneJSON(t.CustomFields)
		out.DeviceTypes[id] = &c
	}
	for id, m := range s.Manufacturers {
		c := *m
		out.Manufacturers[id] = &c
	}
	for id, r := range s.Roles {
		c := *r
		c.CustomFields = cloneJSON(r.CustomFields)
		out.Roles[id] = &c
	}
	for id, st := range s.Sites {
		c := *st
		out.Sites[id] = &c
	}
	for id, i := range s.Interfaces {
		c := *i
		out.Interfaces[id] = &c
	}
	for id, cb := range s.Cables {
		c := *cb
		c.A, c.B = append([]NBTermination(nil), cb.A...), append([]NBTermination(nil), cb.B...)
		out.Cables[id] = &c
	}
	for id, t := range s.Tags {
		c := *t
		out.Tags[id] = &c
	}
	for id, js := range s.Journal {
		for _, j := range js {
			c := *j
			out.Journal[id] = append(out.Journal[id], &c)
		}
	}
	return out
}

// NetBox is the in-memory NetBox. It implements enrollment's NetBox and
// DeviceLister interfaces.
type NetBox struct {
	mu    sync.Mutex
	state *NetBoxState
	site  *Site
}

// View runs fn with the state locked for reading. fn must not keep pointers.
func (n *NetBox) View(fn func(*NetBoxState)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	fn(n.state)
}

// Update runs fn with the state locked for writing.
func (n *NetBox) Update(fn func(*NetBoxState) error) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return fn(n.state)
}

// Enter records one call of op (a write when write is set) in the site's
// call counts and returns the error injected for it, if any. The REST
// emulator calls it once per HTTP request, so call counts and Site.Inject
// apply over HTTP too.
func (n *NetBox) Enter(ctx context.Context, op string, write bool) error {
	return n.enter(ctx, op, write)
}

// Answer ends a write of op that took effect: it returns the error the
// caller sees instead of the success answer — a lost answer injected with
// Site.InjectLost, or the crash of the caller's attempt (WithCrash) — or
// nil. The REST emulator calls it after a write request's handler
// succeeded, and then fails the request instead of answering.
func (n *NetBox) Answer(ctx context.Context, op string) error {
	var err error
	n.site.answer(ctx, SysNetBox, op, &err)
	return err
}

// PlatformClassFieldDefined reports whether the platform_class custom field
// exists on this site (see Site.RemovePlatformClassField).
func (n *NetBox) PlatformClassFieldDefined() bool { return n.site.platformClassFieldDefined() }

func (n *NetBox) enter(ctx context.Context, op string, write bool) error {
	return n.site.enter(ctx, SysNetBox, op, write)
}

// Device reads one device's intent.
func (n *NetBox) Device(ctx context.Context, name string) (intent.Device, error) {
	if err := n.enter(ctx, "device", false); err != nil {
		return intent.Device{}, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.state.DeviceByName(name)
	if d == nil {
		return intent.Device{}, fmt.Errorf("netbox: device %q: %w", name, hostforge.ErrNotFound)
	}
	return n.state.Intent(d)
}

// DeviceNames lists every device name, sorted.
func (n *NetBox) DeviceNames(ctx context.Context) ([]string, error) {
	if err := n.enter(ctx, "device_names", false); err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.state.Devices))
	for _, d := range n.state.Devices {
		out = append(out, d.Name)
	}
	sort.Strings(out)
	return out, nil
}

// SetStatus changes a device's status and nothing else.
func (n *NetBox) SetStatus(ctx context.Context, deviceID int, status intent.Status) (err error) {
	if err := n.enter(ctx, "set_status", true); err != nil {
		return err
	}
	defer n.site.answer(ctx, SysNetBox, "set_status", &err)
	if !status.Known() {
		return fmt.Errorf("netbox: status %q is not a valid choice: %w", status, hostforge.ErrInvalid)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.state.Devices[deviceID]
	if d == nil {
		return fmt.Errorf("netbox: device id %d: %w", deviceID, hostforge.ErrNotFound)
	}
	d.Status = string(status)
	return nil
}

// AddTags adds tags, creating missing tag objects, keeping existing tags.
func (n *NetBox) AddTags(ctx context.Context, deviceID int, slugs ...string) (err error) {
	if err := n.enter(ctx, "add_tags", true); err != nil {
		return err
	}
	defer n.site.answer(ctx, SysNetBox, "add_tags", &err)
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.state.Devices[deviceID]
	if d == nil {
		return fmt.Errorf("netbox: device id %d: %w", deviceID, hostforge.ErrNotFound)
	}
	for _, slug := range slugs {
		if slug == "" {
			return fmt.Errorf("netbox: empty tag slug: %w", hostforge.ErrInvalid)
		}
		t := n.state.EnsureTag(slug)
		has := false
		for _, id := range d.TagIDs {
			has = has || id == t.ID
		}
		if !has {
			d.TagIDs = append(d.TagIDs, t.ID)
		}
	}
	return nil
}

// SetPlatformClass writes custom_fields.platform_class and nothing else.
func (n *NetBox) SetPlatformClass(ctx context.Context, deviceID int, value string) (err error) {
	if err := n.enter(ctx, "set_platform_class", true); err != nil {
		return err
	}
	defer n.site.answer(ctx, SysNetBox, "set_platform_class", &err)
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.state.Devices[deviceID]
	if d == nil {
		return fmt.Errorf("netbox: device id %d: %w", deviceID, hostforge.ErrNotFound)
	}
	if d.CustomFields == nil {
		d.CustomFields = map[string]any{}
	}
	if _, defined := d.CustomFields["platform_class"]; !defined && !n.site.platformClassFieldDefined() {
		return fmt.Errorf("netbox: custom field platform_class does not exist: %w", hostforge.ErrInvalid)
	}
	d.CustomFields["platform_class"] = value
	return nil
}
