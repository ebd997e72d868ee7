// Package ironic is the ironic.Client over the OpenStack Ironic API, on
// gophercloud v2: noauth (standalone Ironic) or keystone. It speaks API
// microversion 1.81 (the node inventory endpoint needs it) and refuses an
// Ironic whose maximum is lower; MinMicroversion states it.
//
// It maps Ironic's answers onto hostforge's system errors: 404 →
// ErrNotFound, 409 "is locked by host" → ironic.ErrNodeLocked, any other
// 409 → ErrConflict, 400/406 → ErrInvalid, 401/403 → ErrUnauthorized, 5xx
// and transport errors → ErrUnavailable, and so does the HTTP client's own
// timeout (Config.Timeout) while the caller's context is live: a slow Ironic
// is unavailable, not a cancelled run. It never waits for a provision
// state itself (gophercloud's WaitForProvisionState polls every second and
// is blind to failed states): the phases return waits instead.
//
// Ironic's error text quotes what it refused, driver_info included, and a
// node's last_error may too: every message the adapter keeps (faultstring,
// description, last_error, maintenance_reason) is scrubbed of the BMC
// passwords it sent in driver_info, the Keystone password, and the
// process's Config.Secrets.
package ironic

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/ironic"
)

// MinMicroversion is the lowest Ironic API version the adapter accepts and
// the one it speaks: GET /v1/nodes/{node}/inventory needs 1.81.
const MinMicroversion = "1.81"

// Config connects to one Ironic.
type Config struct {
	// Endpoint is the Ironic API root, e.g. http://127.0.0.1:6385 (noauth) —
	// ignored with Keystone, where the catalog names it unless set.
	Endpoint string
	// Keystone, when set, authenticates with Keystone; otherwise noauth.
	Keystone *gophercloud.AuthOptions
	// Region selects the catalog endpoint with Keystone.
	Region string
	// CACertPEM pins the CA for a TLS endpoint (default: system roots).
	CACertPEM []byte
	// InsecureSkipVerify disables TLS verification: an explicit, logged opt-in.
	InsecureSkipVerify bool
	// Timeout bounds each request (default 60 s).
	Timeout time.Duration
	Log     *slog.Logger
	// Secrets is the process's set of secret values: the driver_info
	// passwords the adapter sends are registered in it, and Ironic's text
	// is scrubbed with it (nil: a set of the adapter's own).
	Secrets *hostforge.Secrets
}

// Client is the adapter.
type Client struct {
	sc      *gophercloud.ServiceClient
	secrets *hostforge.Secrets
	tr      *http.Transport
}

// Close closes the client's idle connections. The client stays usable: a
// later call opens a new one.
func (c *Client) Close() error {
	c.tr.CloseIdleConnections()
	return nil
}

var _ ironic.Client = (*Client)(nil)

// New connects, negotiates the microversion and returns the client.
func New(ctx context.Context, cfg Config) (*Client, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sec := cfg.Secrets.OrNew()
	if ks := cfg.Keystone; ks != nil {
		sec.AddCredential(ks.Username, ks.Password)
		sec.Add(ks.ApplicationCredentialSecret, ks.TokenID)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if len(cfg.CACertPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.CACertPEM) {
			return nil, fmt.Errorf("ironic: CACertPEM holds no certificate: %w", hostforge.ErrInvalid)
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	if cfg.InsecureSkipVerify {
		log.Warn("TLS verification of the Ironic API is OFF by explicit opt-in", "endpoint", cfg.Endpoint)
		tr.TLSClientConfig.InsecureSkipVerify = true // explicit opt-in (Config.InsecureSkipVerify), logged above
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	httpc := http.Client{Transport: tr, Timeout: timeout}

	var sc *gophercloud.ServiceClient
	var err error
	if cfg.Keystone != nil {
		pc, perr := openstack.NewClient(cfg.Keystone.IdentityEndpoint)
		if perr != nil {
			return nil, fmt.Errorf("ironic: keystone client: %w", hostforge.ErrInvalid)
		}
		pc.HTTPClient = httpc
		if err := openstack.Authenticate(ctx, pc, *cfg.Keystone); err != nil {
			return nil, mapErr(ctx, sec, err, "authenticating with keystone")
		}
		sc, err = openstack.NewBareMetalV1(pc, gophercloud.EndpointOpts{Region: cfg.Region})
		if err == nil && cfg.Endpoint != "" {
			sc.Endpoint = gophercloud.NormalizeURL(strings.TrimSuffix(cfg.Endpoint, "/") + "/v1")
		}
	} else {
		sc, err = noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: strings.TrimSuffix(cfg.Endpoint, "/") + "/v1"})
		if err == nil {
			sc.HTTPClient = httpc
		}
	}
	if err != nil {
		return nil, fmt.Errorf("ironic: %v: %w", err, hostforge.ErrInvalid)
	}
	c := &Client{sc: sc, secrets: sec, tr: tr}
	if err := c.negotiate(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// negotiate reads the API's supported range and pins MinMicroversion.
func (c *Client) negotiate(ctx context.Context) error {
	var root struct {
		Version struct {
			Version    string `json:"version"`
			MinVersion string `json:"min_version"`
		} `json:"version"`
	}
	if _, err := c.sc.Get(ctx, c.sc.Endpoint, &root, &gophercloud.RequestOpts{OkCodes: []int{200}}); err != nil {
		return mapErr(ctx, c.secrets, err, "reading the Ironic API version")
	}
	if root.Version.Version != "" && versionLess(root.Version.Version, MinMicroversion) {
		return fmt.Errorf("ironic: the API offers up to %s, hostforge needs at least %s: %w", root.Version.Version, MinMicroversion, hostforge.ErrInvalid)
	}
	c.sc.Microversion = MinMicroversion
	return nil
}

func versionLess(a, b string) bool {
	pa, pb := strings.SplitN(a, ".", 2), strings.SplitN(b, ".", 2)
	if len(pa) != 2 || len(pb) != 2 {
		return a < b
	}
	ma, _ := strconv.Atoi(pa[0])
	mb, _ := strconv.Atoi(pb[0])
	na, _ := strconv.Atoi(pa[1])
	nb, _ := strconv.Atoi(pb[1])
	return ma < mb || ma == mb && na < nb
}

// mapErr turns a gophercloud error into hostforge's system errors, keeping
// Ironic's own message (faultstring / description) scrubbed of every
// secret in sec. ctx is the caller's:
// only when it has ended is the error a cancellation. The HTTP client's
// own timeout (Config.Timeout) also matches context.DeadlineExceeded, but
// it means Ironic did not answer in time — ErrUnavailable, retryable — so
// it is reported without the context error in its chain.
func mapErr(ctx context.Context, sec *hostforge.Secrets, err error, what string) error {
	if err == nil {
		return nil
	}
	var ue gophercloud.ErrUnexpectedResponseCode
	isResp := errors.As(err, &ue)
	text := err.Error()
	if isResp {
		// gophercloud's own text quotes the whole body: keep only the
		// (scrubbed) fault message.
		text = fmt.Sprintf("HTTP %d", ue.Actual)
	}
	text = sec.Scrub(text)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("ironic: %s: %s: %w", what, text, ctxErr)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("ironic: %s: no answer within the client's timeout: %s: %w", what, text, hostforge.ErrUnavailable)
	}
	if !isResp {
		return fmt.Errorf("ironic: %s: %s: %w", what, text, hostforge.ErrUnavailable)
	}
	msg := sec.Scrub(faultMessage(ue.Body))
	var kind error
	switch {
	case ue.Actual == 404:
		kind = hostforge.ErrNotFound
	case ue.Actual == 409 && strings.Contains(msg, ironic.LockedMarker):
		kind = ironic.ErrNodeLocked
	case ue.Actual == 409:
		kind = hostforge.ErrConflict
	case ue.Actual == 401 || ue.Actual == 403:
		kind = hostforge.ErrUnauthorized
	case ue.Actual >= 500:
		kind = hostforge.ErrUnavailable
	default:
		kind = hostforge.ErrInvalid
	}
	return fmt.Errorf("ironic: %s: %d %s: %w", what, ue.Actual, msg, kind)
}

// faultMessage reads Ironic's error body: {"error_message": "<JSON string>"}
// whose inner object is {faultstring,...} or {title,description,...}.
func faultMessage(body []byte) string {
	var outer struct {
		ErrorMessage string `json:"error_message"`
	}
	if json.Unmarshal(body, &outer) != nil || outer.ErrorMessage == "" {
		s := strings.TrimSpace(string(body))
		if len(s) > 300 {
			s = s[:300]
		}
		return s
	}
	var inner struct {
		Faultstring string `json:"faultstring"`
		Description string `json:"description"`
		Title       string `json:"title"`
	}
	if json.Unmarshal([]byte(outer.ErrorMessage), &inner) == nil {
		switch {
		case inner.Faultstring != "":
			return inner.Faultstring
		case inner.Description != "":
			return inner.Description
		case inner.Title != "":
			return inner.Title
		}
	}
	return outer.ErrorMessage
}

// register adds the secret values of a driver_info map (redfish_password,
// ipmi_password) to the client's set before they are sent: Ironic quotes
// driver_info in its errors.
func (c *Client) register(di map[string]any) {
	for k, v := range di {
		if s, ok := v.(string); ok && hostforge.SecretField(k) {
			c.secrets.Add(s)
		}
	}
}

func (c *Client) url(parts ...string) string {
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return c.sc.ServiceURL(parts...)
}

func ok(codes ...int) *gophercloud.RequestOpts { return &gophercloud.RequestOpts{OkCodes: codes} }

// wireNode is a node as the API renders it.
type wireNode struct {
	UUID                 string         `json:"uuid"`
	Name                 string         `json:"name"`
	Driver               string         `json:"driver"`
	ProvisionState       string         `json:"provision_state"`
	TargetProvisionState *string        `json:"target_provision_state"`
	ProvisionUpdatedAt   *string        `json:"provision_updated_at"`
	PowerState           *string        `json:"power_state"`
	TargetPowerState     *string        `json:"target_power_state"`
	Maintenance          bool           `json:"maintenance"`
	MaintenanceReason    *string        `json:"maintenance_reason"`
	InstanceUUID         *string        `json:"instance_uuid"`
	Reservation          *string        `json:"reservation"`
	LastError            *string        `json:"last_error"`
	Owner                *string        `json:"owner"`
	Lessee               *string        `json:"lessee"`
	ResourceClass        *string        `json:"resource_class"`
	Properties           map[string]any `json:"properties"`
	DriverInfo           map[string]any `json:"driver_info"`
	TargetRAIDConfig     map[string]any `json:"target_raid_config"`
	Traits               []string       `json:"traits"`
	raw                  map[string]json.RawMessage
}

func s(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// decodeNode reads a node; its free-text fields are scrubbed of secrets.
func (c *Client) decodeNode(b json.RawMessage) (ironic.Node, error) {
	var w wireNode
	if err := json.Unmarshal(b, &w); err != nil {
		return ironic.Node{}, fmt.Errorf("ironic: node JSON: %v: %w", err, hostforge.ErrUnavailable)
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(b, &raw)
	n := ironic.Node{
		UUID: w.UUID, Name: w.Name, Driver: w.Driver, ProvisionState: w.ProvisionState,
		TargetProvisionState: s(w.TargetProvisionState), PowerState: s(w.PowerState), TargetPowerState: s(w.TargetPowerState),
		Maintenance: w.Maintenance, MaintenanceReason: c.secrets.Scrub(s(w.MaintenanceReason)), InstanceUUID: s(w.InstanceUUID),
		Reservation: s(w.Reservation), LastError: c.secrets.Scrub(s(w.LastError)), Owner: s(w.Owner), Lessee: s(w.Lessee),
		ResourceClass: s(w.ResourceClass), Properties: w.Properties, DriverInfo: w.DriverInfo,
		TargetRAIDConfig: w.TargetRAIDConfig, Traits: w.Traits, Interfaces: map[string]string{},
	}
	for k, v := range raw {
		if name, isIface := strings.CutSuffix(k, "_interface"); isIface {
			var iv *string
			if json.Unmarshal(v, &iv) == nil && iv != nil {
				n.Interfaces[name] = *iv
			}
		}
	}
	if len(n.TargetRAIDConfig) == 0 {
		n.TargetRAIDConfig = nil
	}
	if at := s(w.ProvisionUpdatedAt); at != "" {
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			return ironic.Node{}, fmt.Errorf("ironic: node JSON: provision_updated_at %q is not a time: %w", at, hostforge.ErrUnavailable)
		}
		n.ProvisionUpdatedAt = t
	}
	return n, nil
}

// GetNode reads a node by name or UUID: the fields named (?fields=, which
// Ironic has taken since API 1.8), or all of them.
func (c *Client) GetNode(ctx context.Context, ident string, fields ...string) (ironic.Node, error) {
	u := c.url("nodes", ident)
	if len(fields) > 0 {
		u += "?" + url.Values{"fields": {strings.Join(fields, ",")}}.Encode()
	}
	var b json.RawMessage
	if _, err := c.sc.Get(ctx, u, &b, ok(200)); err != nil {
		return ironic.Node{}, mapErr(ctx, c.secrets, err, "GET node "+ident)
	}
	return c.decodeNode(b)
}

// CreateNode creates a node.
func (c *Client) CreateNode(ctx context.Context, in ironic.NodeCreate) (ironic.Node, error) {
	body := map[string]any{"name": in.Name, "driver": in.Driver}
	for k, v := range in.Interfaces {
		body[k+"_interface"] = v
	}
	if in.DriverInfo != nil {
		c.register(in.DriverInfo)
		body["driver_info"] = in.DriverInfo
	}
	if in.Properties != nil {
		body["properties"] = in.Properties
	}
	for k, v := range map[string]string{"resource_class": in.ResourceClass, "owner": in.Owner, "lessee": in.Lessee} {
		if v != "" {
			body[k] = v
		}
	}
	var b json.RawMessage
	if _, err := c.sc.Post(ctx, c.url("nodes"), body, &b, ok(201)); err != nil {
		return ironic.Node{}, mapErr(ctx, c.secrets, err, "create node "+in.Name)
	}
	return c.decodeNode(b)
}

// UpdateNode applies a JSON patch.
func (c *Client) UpdateNode(ctx context.Context, ident string, ops []ironic.PatchOp) (ironic.Node, error) {
	for _, op := range ops {
		if v, ok := op.Value.(string); ok && hostforge.SecretField(path.Base(op.Path)) {
			c.secrets.Add(v)
		}
		if m, ok := op.Value.(map[string]any); ok {
			c.register(m)
		}
	}
	var b json.RawMessage
	if _, err := c.sc.Patch(ctx, c.url("nodes", ident), ops, &b, ok(200)); err != nil {
		return ironic.Node{}, mapErr(ctx, c.secrets, err, "PATCH node "+ident)
	}
	return c.decodeNode(b)
}

// ChangeProvisionState requests a provision action (202).
func (c *Client) ChangeProvisionState(ctx context.Context, ident, action string) error {
	_, err := c.sc.Put(ctx, c.url("nodes", ident, "states", "provision"), map[string]any{"target": action}, nil, ok(202))
	return mapErr(ctx, c.secrets, err, "provision "+action+" of node "+ident)
}

// ChangePowerState requests a power change (202).
func (c *Client) ChangePowerState(ctx context.Context, ident, target string) error {
	_, err := c.sc.Put(ctx, c.url("nodes", ident, "states", "power"), map[string]any{"target": target}, nil, ok(202))
	return mapErr(ctx, c.secrets, err, target+" of node "+ident)
}

// SetMaintenance sets or clears maintenance.
func (c *Client) SetMaintenance(ctx context.Context, ident string, on bool, reason string) error {
	var err error
	if on {
		body := map[string]any{}
		if reason != "" {
			body["reason"] = reason
		}
		_, err = c.sc.Put(ctx, c.url("nodes", ident, "maintenance"), body, nil, ok(202))
	} else {
		_, err = c.sc.Delete(ctx, c.url("nodes", ident, "maintenance"), ok(202))
	}
	return mapErr(ctx, c.secrets, err, "maintenance of node "+ident)
}

// SetTraits replaces the traits: gophercloud has no call for it, so this is
// a raw PUT /v1/nodes/{node}/traits.
func (c *Client) SetTraits(ctx context.Context, ident string, traits []string) error {
	if traits == nil {
		traits = []string{}
	}
	_, err := c.sc.Put(ctx, c.url("nodes", ident, "traits"), map[string]any{"traits": traits}, nil, ok(204))
	return mapErr(ctx, c.secrets, err, "traits of node "+ident)
}

// SetRAIDConfig sets the target RAID config.
func (c *Client) SetRAIDConfig(ctx context.Context, ident string, cfg map[string]any) error {
	_, err := c.sc.Put(ctx, c.url("nodes", ident, "states", "raid"), cfg, nil, ok(204))
	return mapErr(ctx, c.secrets, err, "target RAID config of node "+ident)
}

// Inventory reads the node's inspection data.
func (c *Client) Inventory(ctx context.Context, ident string) ([]byte, error) {
	var b json.RawMessage
	if _, err := c.sc.Get(ctx, c.url("nodes", ident, "inventory"), &b, ok(200)); err != nil {
		return nil, mapErr(ctx, c.secrets, err, "inventory of node "+ident)
	}
	return b, nil
}

type wirePort struct {
	UUID                string            `json:"uuid,omitempty"`
	NodeUUID            string            `json:"node_uuid"`
	PortgroupUUID       *string           `json:"portgroup_uuid,omitempty"`
	Address             string            `json:"address"`
	PXEEnabled          bool              `json:"pxe_enabled"`
	LocalLinkConnection map[string]string `json:"local_link_connection,omitempty"`
}

func fromWirePort(w wirePort) ironic.Port {
	p := ironic.Port{UUID: w.UUID, NodeUUID: w.NodeUUID, PortgroupUUID: s(w.PortgroupUUID), Address: w.Address, PXEEnabled: w.PXEEnabled, LocalLinkConnection: w.LocalLinkConnection}
	if len(p.LocalLinkConnection) == 0 {
		p.LocalLinkConnection = nil
	}
	return p
}

// portFields are the port fields hostforge reads: a port list asks for
// them alone (?fields= on /v1/ports; /v1/ports/detail refuses fields) and
// leaves out extra, internal_info, physical_network, is_smartnic, the
// timestamps and links.
const portFields = "uuid,address,node_uuid,portgroup_uuid,pxe_enabled,local_link_connection"

func (c *Client) listPorts(ctx context.Context, q url.Values) ([]ironic.Port, error) {
	var body struct {
		Ports []wirePort `json:"ports"`
	}
	q.Set("fields", portFields)
	if _, err := c.sc.Get(ctx, c.url("ports")+"?"+q.Encode(), &body, ok(200)); err != nil {
		return nil, mapErr(ctx, c.secrets, err, "list ports")
	}
	out := make([]ironic.Port, 0, len(body.Ports))
	for _, w := range body.Ports {
		out = append(out, fromWirePort(w))
	}
	return out, nil
}

// ListPorts lists a node's ports.
func (c *Client) ListPorts(ctx context.Context, nodeUUID string) ([]ironic.Port, error) {
	return c.listPorts(ctx, url.Values{"node": {nodeUUID}})
}

// PortByAddress finds a port by MAC.
func (c *Client) PortByAddress(ctx context.Context, mac string) (ironic.Port, error) {
	ports, err := c.listPorts(ctx, url.Values{"address": {strings.ToLower(mac)}})
	if err != nil {
		return ironic.Port{}, err
	}
	if len(ports) == 0 {
		return ironic.Port{}, fmt.Errorf("ironic: no port with address %s: %w", mac, hostforge.ErrNotFound)
	}
	return ports[0], nil
}

// CreatePort creates a port.
func (c *Client) CreatePort(ctx context.Context, p ironic.Port) (ironic.Port, error) {
	w := wirePort{NodeUUID: p.NodeUUID, Address: strings.ToLower(p.Address), PXEEnabled: p.PXEEnabled, LocalLinkConnection: p.LocalLinkConnection}
	if p.PortgroupUUID != "" {
		w.PortgroupUUID = &p.PortgroupUUID
	}
	var out wirePort
	if _, err := c.sc.Post(ctx, c.url("ports"), w, &out, ok(201)); err != nil {
		return ironic.Port{}, mapErr(ctx, c.secrets, err, "create port "+p.Address)
	}
	return fromWirePort(out), nil
}

// UpdatePort applies a JSON patch to a port.
func (c *Client) UpdatePort(ctx context.Context, uuid string, ops []ironic.PatchOp) (ironic.Port, error) {
	var out wirePort
	if _, err := c.sc.Patch(ctx, c.url("ports", uuid), ops, &out, ok(200)); err != nil {
		return ironic.Port{}, mapErr(ctx, c.secrets, err, "PATCH port "+uuid)
	}
	return fromWirePort(out), nil
}

type wirePortgroup struct {
	UUID       string         `json:"uuid,omitempty"`
	NodeUUID   string         `json:"node_uuid"`
	Name       *string        `json:"name,omitempty"`
	Address    *string        `json:"address,omitempty"`
	Mode       *string        `json:"mode,omitempty"`
	Properties map[string]any `json:"properties,omitempty"`
}

func fromWirePG(w wirePortgroup) ironic.Portgroup {
	return ironic.Portgroup{UUID: w.UUID, NodeUUID: w.NodeUUID, Name: s(w.Name), Address: s(w.Address), Mode: s(w.Mode), Properties: w.Properties}
}

// ListPortgroups lists a node's portgroups.
func (c *Client) ListPortgroups(ctx context.Context, nodeUUID string) ([]ironic.Portgroup, error) {
	var body struct {
		Portgroups []wirePortgroup `json:"portgroups"`
	}
	q := url.Values{"node": {nodeUUID}}
	if _, err := c.sc.Get(ctx, c.url("portgroups", "detail")+"?"+q.Encode(), &body, ok(200)); err != nil {
		return nil, mapErr(ctx, c.secrets, err, "list portgroups")
	}
	out := make([]ironic.Portgroup, 0, len(body.Portgroups))
	for _, w := range body.Portgroups {
		out = append(out, fromWirePG(w))
	}
	return out, nil
}

// CreatePortgroup creates a portgroup.
func (c *Client) CreatePortgroup(ctx context.Context, pg ironic.Portgroup) (ironic.Portgroup, error) {
	w := wirePortgroup{NodeUUID: pg.NodeUUID, Properties: pg.Properties}
	if pg.Name != "" {
		w.Name = &pg.Name
	}
	if pg.Address != "" {
		a := strings.ToLower(pg.Address)
		w.Address = &a
	}
	if pg.Mode != "" {
		w.Mode = &pg.Mode
	}
	var out wirePortgroup
	if _, err := c.sc.Post(ctx, c.url("portgroups"), w, &out, ok(201)); err != nil {
		return ironic.Portgroup{}, mapErr(ctx, c.secrets, err, "create portgroup")
	}
	return fromWirePG(out), nil
}

// DeleteNode deletes a node (tests clean up with it; the phases never delete).
func (c *Client) DeleteNode(ctx context.Context, ident string) error {
	_, err := c.sc.Delete(ctx, c.url("nodes", ident), ok(204))
	return mapErr(ctx, c.secrets, err, "delete node "+ident)
}

// CleanSteps starts a manual clean (tests use it to provoke clean failed).
func (c *Client) CleanSteps(ctx context.Context, ident string, steps []map[string]any) error {
	_, err := c.sc.Put(ctx, c.url("nodes", ident, "states", "provision"), map[string]any{"target": "clean", "clean_steps": steps}, nil, ok(202))
	return mapErr(ctx, c.secrets, err, "clean of node "+ident)
}
