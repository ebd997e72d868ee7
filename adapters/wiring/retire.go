package wiring

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/retirement"
	"github.com/hostforge/hostforge/verify"
)

// RetireConfig is the retire: section.
type RetireConfig struct {
	Erase            string              `yaml:"erase"`
	KeepNode         bool                `yaml:"keep_node"`
	ArchiveRetention enrollment.Duration `yaml:"archive_retention"`
	DNSZone          *DNSZoneConfig      `yaml:"dns_zone"`
}

// DNSZoneConfig is the zone of the BMCs' DNS records.
type DNSZoneConfig struct {
	Name        string   `yaml:"name"`
	SOAEmail    string   `yaml:"soa_email"`
	NameServers []string `yaml:"name_servers"`
	TTL         int      `yaml:"ttl"`
}

// validateRetire checks the section.
func (c *Config) validateRetire() error {
	r := c.Retire
	if r == nil {
		return nil
	}
	switch retirement.EraseMode(r.Erase) {
	case "", retirement.EraseMetadata, retirement.EraseFull:
	default:
		return c.keyError("retire.erase", "%q: want metadata or full", r.Erase)
	}
	if r.ArchiveRetention < 0 {
		return c.keyError("retire.archive_retention", "negative duration")
	}
	if z := r.DNSZone; z != nil {
		if strings.TrimSpace(z.Name) == "" || strings.ContainsAny(z.Name, " /\t\n") {
			return c.keyError("retire.dns_zone.name", "%q: want a DNS zone name", z.Name)
		}
		if z.TTL < 0 {
			return c.keyError("retire.dns_zone.ttl", "%d: want a TTL of 0 or more seconds", z.TTL)
		}
	}
	return nil
}

// RetireSiteConfig maps the gates, the Ironic routing and the retire:
// section onto the retirement's site settings, snapshotted into every
// request. Events are fired when the config has an extensions: section;
// the ledger is cleared when it has a ledger: section.
func (c *Config) RetireSiteConfig() retirement.SiteConfig {
	site := c.SiteConfig().WithDefaults()
	out := retirement.SiteConfig{
		ConfigureDHCP: c.Gates.ConfigureDHCP, ConfigureBMC: c.Gates.ConfigureBMC, IronicEnrol: c.Gates.IronicEnrol,
		IronicInstances: site.IronicInstances, MonitoringItem: site.MonitoringItem,
		Ledger: c.Ledger != nil, Events: c.Extensions != nil,
		NodeLockMaxWait: site.NodeLockMaxWait.D(), EraseDeadline: site.CleaningDeadline.D(), MaxAttempts: site.MaxAttempts,
	}
	if r := c.Retire; r != nil {
		out.Erase, out.KeepNode, out.ArchiveRetention = retirement.EraseMode(r.Erase), r.KeepNode, r.ArchiveRetention.D()
		if z := r.DNSZone; z != nil {
			out.DNSZone = retirement.DNSZone{Name: z.Name, SOAEmail: z.SOAEmail, NameServers: z.NameServers, TTL: z.TTL}
		}
	}
	return out.WithDefaults()
}

// Retirement is the retirement's step set on these systems: the NetBox
// adapter, the phases enrollment runs with (their DHCP server, BMC
// connector and vault, Ironic instances), and the ledger. nil with
// Options.SubmitOnly.
func (s *Systems) Retirement() *retirement.Executor {
	e := s.Enrollment
	if e == nil {
		return nil
	}
	rx := &retirement.Executor{NetBox: s.NetBox, Ironic: map[string]retirement.IronicRetirement{}, Log: s.Log, Secrets: s.Secrets}
	if p, ok := e.DHCP.(*dhcp.Phase); ok {
		rx.DHCP = p
	}
	if e.BMC != nil && s.Vault != nil {
		rx.BMC = &bmc.Retirer{Connector: s.BMCConnector, Vault: s.Vault, Clock: clock.Real{}, Log: s.Log, Secrets: s.Secrets}
	}
	for name, p := range e.Ironic {
		if ph, ok := p.(*ironic.Phases); ok {
			rx.Ironic[name] = ph
		}
	}
	if s.Ledger != nil {
		rx.Ledger = s.Ledger
	}
	return rx
}

// NewRunID is a fresh retirement run ID: "retire-" and 64 random bits.
func NewRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "retire-" + hex.EncodeToString(b[:])
}

// RetireRequest builds the request of one device as a submitter does: its
// device_class from its NetBox role, its fleet-manager identity from the
// ledger (none when the ledger does not know it), the site's settings.
func (s *Systems) RetireRequest(ctx context.Context, device, run string, p retirement.Params) (retirement.Request, error) {
	d, err := s.NetBox.Device(ctx, device)
	if err != nil {
		specs := hostforge.SystemSpecs{NotFound: retirement.DeviceNotFound, Unauthorized: retirement.NetBoxUnauthorized,
			Unavailable: retirement.NetBoxUnavailable, Conflict: retirement.NetBoxUnavailable, Invalid: retirement.NetBoxUnavailable}
		return retirement.Request{}, hostforge.Classified(specs.Classify(err, "submit", "reading device %s to submit its retirement", device))
	}
	identity := ""
	if s.Proofs != nil {
		id, _, err := s.Proofs.Snapshot(ctx, device)
		switch {
		case err == nil:
			identity = id
		case errors.Is(err, hostforge.ErrNotFound):
		default:
			return retirement.Request{}, retirement.LedgerUnavailable.At("submit").Wrap(err, "reading the fleet-manager identity of %s", device)
		}
	}
	return retirement.NewRequest(device, d.Role.DeviceClass, s.Site, run, identity, s.Config.RetireSiteConfig(), p), nil
}

// AnnounceRetirement fires a retirement's event through extension dispatch
// (extensions.Fire) on the retirement's own runtime, so the dispatch's
// steps are steps of the same run: the runtime must have the dispatcher's
// steps (flow.Merge with the retirement's, or a worker that registers
// both). serverDecommissioned carries the server object of the host
// (extensions.ServerFromIntent over its NetBox intent and the inventory
// its node had); serverDeleteDNS the BMC's record set.
func AnnounceRetirement(ctx context.Context, rt flow.Runtime, a retirement.Announcement) ([]retirement.Delivery, error) {
	ev, err := RetirementEvent(a)
	if err != nil {
		return nil, err
	}
	rep, err := extensions.Fire(ctx, rt, ev)
	out := make([]retirement.Delivery, 0, len(rep.Deliveries))
	for _, d := range rep.Deliveries {
		out = append(out, retirement.Delivery{Event: rep.EventID, Stage: string(rep.Stage), Extension: d.Extension, Task: d.Task,
			DeliveryID: d.DeliveryID, Status: string(d.Status), Code: d.Code, Message: d.Message})
	}
	return out, err
}

// RetirementEvent builds the extension event of an announcement.
func RetirementEvent(a retirement.Announcement) (extensions.Event, error) {
	var payload any
	h := a.Host
	switch extensions.Stage(a.Stage) {
	case extensions.ServerDecommissioned:
		inv := verify.Inventory{}
		if len(h.Inventory) > 0 {
			parsed, err := verify.ParseInventory(h.Inventory)
			if err != nil {
				return extensions.Event{}, extensions.PayloadInvalid.Wrap(err, "device %s node %s: the inspection inventory cannot be read", h.Device.Name, h.Node)
			}
			inv = parsed
		}
		srv := extensions.ServerFromIntent(h.Device, inv, h.Node)
		status := "decommissioned"
		srv.ServerStatus = &status
		payload = extensions.ServerPayload{Server: srv}
	case extensions.ServerDeleteDNS:
		z := h.Zone
		rs := extensions.ServerDNSRecordSet{
			Zone:     extensions.DNSZone{ZoneName: z.Name, SOAEmail: z.SOAEmail, NameServers: append([]string{}, z.NameServers...), TTL: z.TTL, IsDefault: true},
			ServerID: h.Device.ID, SerialNumber: h.Device.Serial, ManagementAddress: h.BMCAddress, Hostname: h.BMCHostname,
			IP: extensions.DNSAddress{Status: "released", IP: h.BMCAddress}, Operation: "delete",
		}
		if z.Name != "" {
			rs.FQDN = h.BMCHostname + "." + strings.TrimSuffix(z.Name, ".")
		}
		payload = extensions.ServerDNSPayload{ServerDNSRecordSet: rs}
	default:
		return extensions.Event{}, extensions.EventInvalid.New("a retirement fires serverDecommissioned and serverDeleteDNS, not %q", a.Stage)
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return extensions.Event{}, extensions.PayloadInvalid.Wrap(err, "device %s: the %s payload cannot be encoded", h.Device.Name, a.Stage)
	}
	ev, _, err := extensions.NewEvent(a.ID, extensions.Stage(a.Stage), b)
	return ev, err
}

var _ retirement.Ledger = (*Ledger)(nil)

// RetireState implements retirement.Ledger.
func (w *Ledger) RetireState(ctx context.Context, device string) (string, bool, string, error) {
	l, err := w.get(ctx)
	if err != nil {
		return "", false, "", err
	}
	return l.RetireState(ctx, device)
}

// RetireEnrollment implements retirement.Ledger.
func (w *Ledger) RetireEnrollment(ctx context.Context, device, identity, run string) (bool, error) {
	l, err := w.get(ctx)
	if err != nil {
		return false, err
	}
	return l.RetireEnrollment(ctx, device, identity, run)
}
