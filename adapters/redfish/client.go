package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
)

type doc = map[string]any

// client is one authenticated connection. Resource paths are discovered
// from the service root and cached.
type client struct {
	api    *gofish.APIClient
	mgr    string
	sys    string
	vendor bmc.Vendor
}

// convert turns gofish and transport errors into hostforge's vocabulary,
// keeping the BMC's own message.
func convert(err error) error {
	if err == nil {
		return nil
	}
	var se *schemas.Error
	if errors.As(err, &se) {
		msg := se.Message
		if len(se.ExtendedInfos) > 0 && se.ExtendedInfos[0].Message != "" {
			msg = se.ExtendedInfos[0].Message
		}
		return bmc.HTTPError(se.HTTPReturnedStatusCode, msg)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("redfish: %w: %w", hostforge.ErrUnavailable, err)
	}
	return fmt.Errorf("redfish: %v: %w", err, hostforge.ErrUnavailable)
}

func (c *client) get(ctx context.Context, p string) (doc, error) {
	resp, err := c.api.WithContext(ctx).Get(p)
	if err != nil {
		return nil, convert(err)
	}
	defer resp.Body.Close()
	var d doc
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&d); err != nil {
		return nil, fmt.Errorf("redfish: GET %s: %v: %w", p, err, hostforge.ErrInvalid)
	}
	return d, nil
}

// write sends a PATCH or POST and returns the Location header.
func (c *client) write(ctx context.Context, method, p string, body any) (string, error) {
	api := c.api.WithContext(ctx)
	var resp *http.Response
	var err error
	switch method {
	case http.MethodPatch:
		resp, err = api.Patch(p, body)
	case http.MethodPost:
		resp, err = api.Post(p, body)
	case http.MethodDelete:
		resp, err = api.Delete(p)
	}
	if err != nil {
		return "", convert(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.Header.Get("Location"), nil
}

func link(d doc, keys ...string) string {
	var cur any = d
	for _, k := range keys {
		m, ok := cur.(doc)
		if !ok {
			return ""
		}
		cur = m[k]
	}
	if m, ok := cur.(doc); ok {
		s, _ := m["@odata.id"].(string)
		return s
	}
	return ""
}

func str(d doc, k string) string { s, _ := d[k].(string); return s }

func members(d doc) []string {
	var out []string
	ms, _ := d["Members"].([]any)
	for _, m := range ms {
		if mm, ok := m.(doc); ok {
			if s, ok := mm["@odata.id"].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func (c *client) members(ctx context.Context, coll string) ([]doc, error) {
	d, err := c.get(ctx, coll)
	if err != nil {
		return nil, err
	}
	var out []doc
	for _, m := range members(d) {
		md, err := c.get(ctx, m)
		if errors.Is(err, hostforge.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, md)
	}
	return out, nil
}

func (c *client) discover(ctx context.Context) error {
	if c.mgr != "" && c.sys != "" {
		return nil
	}
	root, err := c.get(ctx, "/redfish/v1")
	if err != nil {
		return err
	}
	for _, x := range []struct {
		key string
		dst *string
	}{{"Managers", &c.mgr}, {"Systems", &c.sys}} {
		coll := link(root, x.key)
		if coll == "" {
			return fmt.Errorf("redfish: service root has no %s: %w", x.key, bmc.ErrUnsupported)
		}
		d, err := c.get(ctx, coll)
		if err != nil {
			return err
		}
		if ms := members(d); len(ms) > 0 {
			*x.dst = ms[0]
		} else {
			return fmt.Errorf("redfish: %s is empty: %w", coll, bmc.ErrUnsupported)
		}
	}
	return nil
}

func (c *client) manager(ctx context.Context) (doc, error) {
	if err := c.discover(ctx); err != nil {
		return nil, err
	}
	return c.get(ctx, c.mgr)
}

func (c *client) system(ctx context.Context) (doc, error) {
	if err := c.discover(ctx); err != nil {
		return nil, err
	}
	return c.get(ctx, c.sys)
}

func (c *client) Identify(ctx context.Context) (bmc.Identity, error) {
	root, err := c.get(ctx, "/redfish/v1")
	if err != nil {
		return bmc.Identity{}, err
	}
	enc := func(d doc) []byte {
		if d == nil {
			return nil
		}
		b, _ := json.Marshal(d)
		return b
	}
	var m, s doc
	if err := c.discover(ctx); err == nil {
		m, _ = c.get(ctx, c.mgr)
		s, _ = c.get(ctx, c.sys)
	}
	id, err := bmc.IdentityFromJSON(enc(root), enc(m), enc(s))
	if err != nil {
		return bmc.Identity{}, fmt.Errorf("redfish: %v: %w", err, hostforge.ErrInvalid)
	}
	if v, err := bmc.Detect(id); err == nil {
		c.vendor = v
	}
	return id, nil
}

func (c *client) vendorOf(ctx context.Context) bmc.Vendor {
	if c.vendor == "" {
		_, _ = c.Identify(ctx)
	}
	return c.vendor
}

// ---- accounts ---------------------------------------------------------------

func (c *client) accountsPath(ctx context.Context) (string, error) {
	root, err := c.get(ctx, "/redfish/v1")
	if err != nil {
		return "", err
	}
	as := link(root, "AccountService")
	if as == "" {
		return "", fmt.Errorf("redfish: no AccountService: %w", bmc.ErrUnsupported)
	}
	d, err := c.get(ctx, as)
	if errors.Is(err, hostforge.ErrNotFound) {
		return "", fmt.Errorf("redfish: %s: %w", as, bmc.ErrUnsupported)
	}
	if err != nil {
		return "", err
	}
	if p := link(d, "Accounts"); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("redfish: AccountService has no Accounts: %w", bmc.ErrUnsupported)
}

func (c *client) accountDocs(ctx context.Context) (string, []doc, error) {
	coll, err := c.accountsPath(ctx)
	if err != nil {
		return "", nil, err
	}
	ds, err := c.members(ctx, coll)
	if errors.Is(err, hostforge.ErrNotFound) {
		return "", nil, fmt.Errorf("redfish: %s: %w", coll, bmc.ErrUnsupported)
	}
	return coll, ds, err
}

func (c *client) ListAccounts(ctx context.Context) ([]bmc.Account, error) {
	_, ds, err := c.accountDocs(ctx)
	if err != nil {
		return nil, err
	}
	var out []bmc.Account
	for _, d := range ds {
		if u := str(d, "UserName"); u != "" {
			en, _ := d["Enabled"].(bool)
			out = append(out, bmc.Account{ID: str(d, "Id"), UserName: u, Role: str(d, "RoleId"), Enabled: en})
		}
	}
	return out, nil
}

func (c *client) accountPath(ctx context.Context, id string) (string, error) {
	_, ds, err := c.accountDocs(ctx)
	if err != nil {
		return "", err
	}
	for _, d := range ds {
		if str(d, "Id") == id {
			return str(d, "@odata.id"), nil
		}
	}
	return "", bmc.HTTPError(http.StatusNotFound, "account "+id+" not found")
}

func (c *client) SetPassword(ctx context.Context, id, password string) error {
	p, err := c.accountPath(ctx, id)
	if err != nil {
		return err
	}
	_, err = c.write(ctx, http.MethodPatch, p, doc{"Password": password})
	return err
}

func (c *client) CreateAccount(ctx context.Context, a bmc.Account, password string) (string, error) {
	coll, ds, err := c.accountDocs(ctx)
	if err != nil {
		return "", err
	}
	body := doc{"UserName": a.UserName, "Password": password, "RoleId": a.Role, "Enabled": a.Enabled}
	for _, d := range ds {
		// Fixed-slot BMCs: fill the first free slot (iDRAC reserves slot 1).
		if str(d, "UserName") == "" && !(c.vendorOf(ctx) == bmc.VendorDell && str(d, "Id") == "1") {
			if _, err := c.write(ctx, http.MethodPatch, str(d, "@odata.id"), body); err != nil {
				return "", err
			}
			return str(d, "Id"), nil
		}
	}
	loc, err := c.write(ctx, http.MethodPost, coll, body)
	if err != nil {
		return "", err
	}
	return path.Base(loc), nil
}

func (c *client) UpdateAccount(ctx context.Context, a bmc.Account) error {
	p, err := c.accountPath(ctx, a.ID)
	if err != nil {
		return err
	}
	_, err = c.write(ctx, http.MethodPatch, p, doc{"RoleId": a.Role, "Enabled": a.Enabled})
	return err
}

// ---- manager network ---------------------------------------------------------

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

func asSlice(v any) []any { s, _ := v.([]any); return s }

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

// ---- syslog -------------------------------------------------------------------

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

// ---- BIOS and boot ----------------------------------------------------------------

func settingsObject(d doc) string { return link(d, "@Redfish.Settings", "SettingsObject") }

func jobID(loc string) string {
	if strings.Contains(loc, "/Jobs/") {
		return path.Base(loc)
	}
	return ""
}

func (c *client) applyTime(ctx context.Context, body doc) doc {
	if c.vendorOf(ctx) == bmc.VendorDell {
		body["@Redfish.SettingsApplyTime"] = doc{"ApplyTime": "OnReset"}
	}
	return body
}

func (c *client) bios(ctx context.Context) (doc, error) {
	s, err := c.system(ctx)
	if err != nil {
		return nil, err
	}
	p := link(s, "Bios")
	if p == "" {
		return nil, fmt.Errorf("redfish: system has no Bios: %w", bmc.ErrUnsupported)
	}
	return c.get(ctx, p)
}

func (c *client) BiosAttributes(ctx context.Context) (map[string]any, map[string]any, error) {
	b, err := c.bios(ctx)
	if err != nil {
		return nil, nil, err
	}
	cur, _ := b["Attributes"].(doc)
	pend := map[string]any{}
	if so := settingsObject(b); so != "" {
		sd, err := c.get(ctx, so)
		if err != nil && !errors.Is(err, hostforge.ErrNotFound) {
			return nil, nil, err
		}
		sa, _ := sd["Attributes"].(doc)
		for k, v := range sa {
			if fmt.Sprint(cur[k]) != fmt.Sprint(v) {
				pend[k] = v
			}
		}
	}
	return cur, pend, nil
}

func (c *client) SetBiosAttributes(ctx context.Context, attrs map[string]any) (string, error) {
	b, err := c.bios(ctx)
	if err != nil {
		return "", err
	}
	target := settingsObject(b)
	if target == "" {
		target = str(b, "@odata.id")
	}
	loc, err := c.write(ctx, http.MethodPatch, target, c.applyTime(ctx, doc{"Attributes": attrs}))
	return jobID(loc), err
}

func (c *client) bootOptionDocs(ctx context.Context) ([]doc, error) {
	s, err := c.system(ctx)
	if err != nil {
		return nil, err
	}
	p := link(s, "Boot", "BootOptions")
	if p == "" {
		p = link(s, "BootOptions")
	}
	if p == "" {
		return nil, fmt.Errorf("redfish: system has no BootOptions: %w", bmc.ErrUnsupported)
	}
	return c.members(ctx, p)
}

func optionID(d doc) string {
	if r := str(d, "BootOptionReference"); r != "" {
		return r
	}
	return str(d, "Id")
}

func (c *client) BootOptions(ctx context.Context) ([]bmc.BootOption, error) {
	ds, err := c.bootOptionDocs(ctx)
	if err != nil {
		return nil, err
	}
	var out []bmc.BootOption
	for _, d := range ds {
		o := bmc.BootOption{ID: optionID(d), DisplayName: str(d, "DisplayName"), UefiDevicePath: str(d, "UefiDevicePath")}
		if v, ok := d["BootOptionEnabled"].(bool); ok {
			o.Enabled = &v
		}
		out = append(out, o)
	}
	return out, nil
}

func (c *client) SetBootOptionEnabled(ctx context.Context, id string, enabled bool) error {
	ds, err := c.bootOptionDocs(ctx)
	if err != nil {
		return err
	}
	for _, d := range ds {
		if optionID(d) == id {
			_, err := c.write(ctx, http.MethodPatch, str(d, "@odata.id"), doc{"BootOptionEnabled": enabled})
			return err
		}
	}
	return bmc.HTTPError(http.StatusNotFound, "boot option "+id+" not found")
}

func bootOrder(d doc) []string {
	b, _ := d["Boot"].(doc)
	var out []string
	for _, x := range asSlice(b["BootOrder"]) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (c *client) BootOrder(ctx context.Context) ([]string, []string, error) {
	s, err := c.system(ctx)
	if err != nil {
		return nil, nil, err
	}
	cur := bootOrder(s)
	var pend []string
	if so := settingsObject(s); so != "" {
		sd, err := c.get(ctx, so)
		if err != nil && !errors.Is(err, hostforge.ErrNotFound) {
			return nil, nil, err
		}
		if p := bootOrder(sd); p != nil && !slices.Equal(p, cur) {
			pend = p
		}
	}
	return cur, pend, nil
}

func (c *client) SetBootOrder(ctx context.Context, order []string) (string, error) {
	s, err := c.system(ctx)
	if err != nil {
		return "", err
	}
	body := doc{"Boot": doc{"BootOrder": order}}
	target := settingsObject(s)
	if target == "" {
		target = c.sys
	} else {
		body = c.applyTime(ctx, body)
	}
	loc, err := c.write(ctx, http.MethodPatch, target, body)
	return jobID(loc), err
}

// ---- jobs, power, links ---------------------------------------------------------

func (c *client) jobsPath(ctx context.Context) (string, error) {
	m, err := c.manager(ctx)
	if err != nil {
		return "", err
	}
	if p := link(m, "Oem", "Dell", "Jobs"); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("redfish: no job queue on this manager: %w", bmc.ErrUnsupported)
}

func (c *client) ListJobs(ctx context.Context) ([]bmc.Job, error) {
	p, err := c.jobsPath(ctx)
	if err != nil {
		return nil, err
	}
	ds, err := c.members(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []bmc.Job
	for _, d := range ds {
		out = append(out, bmc.Job{ID: str(d, "Id"), Name: str(d, "Name"), State: str(d, "JobState"), Message: str(d, "Message")})
	}
	return out, nil
}

func (c *client) DeleteJob(ctx context.Context, id string) error {
	p, err := c.jobsPath(ctx)
	if err != nil {
		return err
	}
	_, err = c.write(ctx, http.MethodDelete, p+"/"+id, nil)
	return err
}

func action(d doc, name string) string {
	a, _ := d["Actions"].(doc)
	t, _ := a[name].(doc)
	return str(t, "target")
}

func (c *client) ResetManager(ctx context.Context) error {
	m, err := c.manager(ctx)
	if err != nil {
		return err
	}
	t := action(m, "#Manager.Reset")
	if t == "" {
		return fmt.Errorf("redfish: manager has no Reset action: %w", bmc.ErrUnsupported)
	}
	_, err = c.write(ctx, http.MethodPost, t, doc{"ResetType": "GracefulRestart"})
	return err
}

func (c *client) ResetSystem(ctx context.Context) error {
	s, err := c.system(ctx)
	if err != nil {
		return err
	}
	t := action(s, "#ComputerSystem.Reset")
	if t == "" {
		return fmt.Errorf("redfish: system has no Reset action: %w", bmc.ErrUnsupported)
	}
	_, err = c.write(ctx, http.MethodPost, t, doc{"ResetType": "ForceRestart"})
	return err
}

func (c *client) HostNICs(ctx context.Context) ([]bmc.HostNIC, error) {
	s, err := c.system(ctx)
	if err != nil {
		return nil, err
	}
	p := link(s, "EthernetInterfaces")
	if p == "" {
		return nil, fmt.Errorf("redfish: system has no EthernetInterfaces: %w", bmc.ErrUnsupported)
	}
	ds, err := c.members(ctx, p)
	if errors.Is(err, hostforge.ErrNotFound) {
		return nil, fmt.Errorf("redfish: %s: %w", p, bmc.ErrUnsupported)
	}
	if err != nil {
		return nil, err
	}
	var out []bmc.HostNIC
	for _, d := range ds {
		mac := str(d, "MACAddress")
		if mac == "" || strings.EqualFold(str(d, "Id"), "ToManager") {
			continue
		}
		out = append(out, bmc.HostNIC{MAC: mac, LinkStatus: str(d, "LinkStatus")})
	}
	return out, nil
}
