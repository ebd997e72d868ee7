package lab

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/adapters/ssh/sshtest"
	"github.com/hostforge/hostforge/adapters/vault"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
	"github.com/hostforge/hostforge/fakes/redfishemu"
	"github.com/hostforge/hostforge/ironic"
)

// Files the lab writes into its directory.
const (
	ConfigFile = "lab.yaml"
	VaultFile  = "vault.yaml"
	TokenFile  = "netbox-token"
	CAFile     = "ca.pem"
	HostsFile  = "hosts"
	DHCPDir    = "dhcp"
	// LedgerFile is the fleet manager's ledger (SQLite), which lab.yaml's
	// ledger: section names.
	LedgerFile = "ledger.db"
)

// IronicInstance is the name of the lab's one Ironic instance in lab.yaml
// (references in the ledger read "ironic/<node-uuid>").
const IronicInstance = "ironic"

// LedgerProjectionInterval is how often a worker on lab.yaml projects
// Ironic's nodes into the ledger: a lab's Ironic transitions take seconds,
// so its proof settles in seconds too.
const LedgerProjectionInterval = 2 * time.Second

// SSHTarget is an SSH server the lab uses as the DHCP server instead of
// its in-process one (a real sshd in the integration tests).
type SSHTarget struct {
	// Addr is host:port.
	Addr string
	User string
	// PrivateKey is the client key (OpenSSH PEM) and KnownHosts the
	// server's known_hosts line(s).
	PrivateKey, KnownHosts string
}

// Options configure a lab. Zero fields take the defaults noted.
type Options struct {
	// Dir receives lab.yaml, the vault, the NetBox token, the CA and the
	// DHCP server's directory; it is created. Files of an earlier lab in it
	// are replaced; a lab still running there is not (Start returns a
	// *BusyError naming its PID).
	Dir string
	// Site is the rack (default enrolltest.DemoRack()). Every host with an
	// out-of-band address gets a BMC emulator of its vendor.
	Site *fakes.Site
	// SiteName is lab.yaml's site slug (default enrolltest.DemoSite). The
	// worker names its schedules after it: labs sharing a Temporal
	// namespace give each its own.
	SiteName string
	// IronicURL is a running Ironic's API ("" runs without Ironic: the
	// enrol gate is off in lab.yaml). InspectorURL is its
	// ironic-inspector's; with it the lab plays the ramdisk (see Ramdisk).
	IronicURL, InspectorURL string
	// Agent makes the hosts' nodes clean in band (the direct deploy
	// interface) with the lab playing the agent (see Agent): Ironic's
	// erase steps run as they do on real hardware. It needs an Ironic that
	// can reach its own API from a ramdisk ([service_catalog]
	// endpoint_override; scripts/integration.d/ironic_agent.sh).
	Agent bool
	// SSH replaces the in-process SSH server.
	SSH *SSHTarget
	// Timing is the Ironic timing written into lab.yaml (default
	// FastTiming: fake-hardware transitions take a fraction of a second).
	Timing *wiring.IronicTiming
	// BMCTiming sets the emulators' reset, boot and job durations (default
	// FastBMC).
	BMCTiming *BMCTiming
	Log       *slog.Logger
}

// BMCTiming are the Redfish emulators' durations (redfishemu knobs).
type BMCTiming struct {
	ResetDowntime, HostBootTime, ScheduleDelay, RunDuration time.Duration
}

// FastBMC are BMC timings a lab enrols in: seconds where real BMCs take
// minutes.
var FastBMC = BMCTiming{ResetDowntime: 3 * time.Second, HostBootTime: 3 * time.Second, ScheduleDelay: time.Second, RunDuration: 3 * time.Second}

// FastTiming is the Ironic timing for Ironic's fake-hardware driver, whose
// transitions take 0.03-0.3 s and whose inspector is asked every 2 s. The
// link budget is 30 s: a host with dead optics fails after it.
func FastTiming() wiring.IronicTiming {
	d := func(x time.Duration) enrollment.Duration { return enrollment.Duration(x) }
	return wiring.IronicTiming{
		StatePoll: d(time.Second), LockRetry: d(time.Second), InspectionPoll: d(time.Second),
		InspectionTimeout: d(5 * time.Minute), PowerOnTimeout: d(time.Minute), LinkBudget: d(30 * time.Second),
		CleanPollMin: d(time.Second), CleanPollMax: d(2 * time.Second), InventoryGrace: d(30 * time.Second),
	}
}

// BMC is one host's emulated BMC.
type BMC struct {
	Host string
	// Address is the host's out-of-band IP (NetBox's); Endpoint is where
	// the emulator listens (bmc.endpoints maps one to the other).
	Address, Endpoint string
	Emulator          *redfishemu.Emulator
	srv               *http.Server
	served            chan struct{}
}

// Lab is a running lab.
type Lab struct {
	// Config is the path of lab.yaml.
	Config string
	// Dir is the lab's directory.
	Dir  string
	Site *fakes.Site
	// NetBoxURL is the NetBox emulator's (TLS, signed by the lab CA).
	NetBoxURL string
	// NetBox is the emulator itself: a test adds event rules to it.
	NetBox *netboxhttp.Server
	// BMCs are the emulators by host.
	BMCs map[string]*BMC
	// SSHAddr is the DHCP server's SSH address.
	SSHAddr string
	// Hosts are the rack's hosts, in the order the site lists them.
	Hosts []string
	// Ironic says whether lab.yaml enrols into Ironic.
	Ironic bool

	log     *slog.Logger
	netbox  *httptest.Server
	ssh     *sshtest.Server
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	ramdisk *Ramdisk
	agent   *Agent
	once    sync.Once
	// lock is the directory's lab lock, released by Close.
	lock *os.File
}

// Start serves the rack on loopback and writes lab.yaml for it. Close
// stops everything.
func Start(ctx context.Context, o Options) (l *Lab, err error) {
	if o.Dir == "" {
		return nil, errors.New("lab: Options.Dir is empty")
	}
	if o.Site == nil {
		o.Site = enrolltest.DemoRack()
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	timing := FastTiming()
	if o.Timing != nil {
		timing = *o.Timing
	}
	bt := FastBMC
	if o.BMCTiming != nil {
		bt = *o.BMCTiming
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, DHCPDir, "hostforge.d"), 0o700); err != nil {
		return nil, err
	}
	// One lab per directory: a second would replace the first one's
	// ledger, vault and CA under it.
	lockFile, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = lockFile.Close()
		}
	}()
	// The files of an earlier lab go, and only they: each lab starts fresh.
	stale, _ := filepath.Glob(filepath.Join(dir, DHCPDir, "hostforge.d", "*.conf*"))
	for _, f := range []string{ConfigFile, VaultFile, VaultFile + ".lock", TokenFile, CAFile, HostsFile,
		LedgerFile, LedgerFile + "-wal", LedgerFile + "-shm",
		filepath.Join(DHCPDir, "restarts.log"), filepath.Join(DHCPDir, "dhcpd.conf")} {
		stale = append(stale, filepath.Join(dir, f))
	}
	for _, f := range stale {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	l = &Lab{Dir: dir, Site: o.Site, BMCs: map[string]*BMC{}, Hosts: o.Site.HostNames(), Ironic: o.IronicURL != "", log: o.Log, lock: lockFile}
	defer func() {
		if err != nil {
			l.Close()
			l = nil
		}
	}()
	ca, err := newCA()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, CAFile), ca.pem, 0o644); err != nil {
		return nil, err
	}
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{ca.leaf}, MinVersion: tls.VersionTLS12}

	// NetBox: the site's NetBox over HTTP, behind a token.
	token := randomHex(16)
	if err := os.WriteFile(filepath.Join(dir, TokenFile), []byte(token+"\n"), 0o600); err != nil {
		return nil, err
	}
	if l.Ironic {
		fakeHardware(o.Site, o.InspectorURL != "", o.Agent)
	}
	l.NetBox = netboxhttp.New(o.Site.NetBox, netboxhttp.Options{Token: token})
	l.netbox = httptest.NewUnstartedServer(l.NetBox)
	l.netbox.TLS = tlsCfg.Clone()
	l.netbox.Config.ErrorLog = quietLog
	l.netbox.StartTLS()
	l.NetBoxURL = l.netbox.URL

	// One Redfish emulator per host with an out-of-band address.
	factory := map[string]string{bmc.FieldUsername: fakes.FakeFactoryUser, bmc.FieldPassword: "lab-" + randomHex(8)}
	for _, name := range l.Hosts {
		h, _ := o.Site.Host(name)
		if h.OOBIP == "" {
			continue
		}
		b, err := startBMC(h, factory, bt, tlsCfg)
		if err != nil {
			return nil, fmt.Errorf("lab: BMC of %s: %w", name, err)
		}
		l.BMCs[name] = b
	}

	// The DHCP server: an SSH target whose commands run in the lab directory.
	target := o.SSH
	if target == nil {
		client, err := sshtest.GenerateKey()
		if err != nil {
			return nil, err
		}
		if l.ssh, err = sshtest.Listen(client.PublicKey()); err != nil {
			return nil, err
		}
		item := l.ssh.VaultItem(client, currentUser())
		target = &SSHTarget{Addr: l.ssh.Addr, User: item[ssh.FieldUser], PrivateKey: item[ssh.FieldPrivateKey], KnownHosts: item[ssh.FieldKnownHosts]}
	}
	l.SSHAddr = target.Addr

	// The vault: the factory and monitoring credentials, the SSH key. The
	// per-host admin items are the BMC phase's to create by rotating away
	// from the factory password — except on Supermicro BMCs, which ship a
	// unique password per unit that the operator records (here: the
	// factory one).
	items := map[string]map[string]string{
		enrollment.DefaultFactoryItem:    factory,
		enrollment.DefaultMonitoringItem: {bmc.FieldUsername: "ipmi_exporter", bmc.FieldPassword: "lab-" + randomHex(8)},
		ssh.VaultItem:                    {ssh.FieldPrivateKey: target.PrivateKey, ssh.FieldKnownHosts: target.KnownHosts, ssh.FieldUser: target.User},
	}
	for h, b := range l.BMCs {
		if b.Emulator.Vendor() == string(bmc.VendorSupermicro) {
			items[enrollment.AdminItem(h)] = map[string]string{bmc.FieldUsername: factory[bmc.FieldUsername], bmc.FieldPassword: factory[bmc.FieldPassword]}
		}
	}
	if err := vault.Create(filepath.Join(dir, VaultFile), items); err != nil {
		return nil, err
	}
	doc, err := l.configYAML(o, target, timing)
	if err != nil {
		return nil, err
	}
	if _, err := wiring.Parse(ConfigFile, []byte(doc)); err != nil {
		return nil, fmt.Errorf("lab: the config the lab wrote does not parse (a lab bug): %w", err)
	}
	l.Config = filepath.Join(dir, ConfigFile)
	if err := os.WriteFile(l.Config, []byte(doc), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, HostsFile), []byte(strings.Join(l.Hosts, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	if err := writeDHCPScripts(dir); err != nil {
		return nil, err
	}

	rctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	if o.IronicURL != "" && o.InspectorURL != "" {
		l.ramdisk = &Ramdisk{Site: o.Site, IronicURL: o.IronicURL, InspectorURL: o.InspectorURL, Log: o.Log}
		l.wg.Add(1)
		go func() { defer l.wg.Done(); l.ramdisk.Run(rctx) }()
	}
	if o.IronicURL != "" && o.Agent {
		l.agent = &Agent{Site: o.Site, IronicURL: o.IronicURL, Log: o.Log}
		l.wg.Add(1)
		go func() { defer l.wg.Done(); _ = l.agent.Run(rctx) }()
	}
	return l, nil
}

// Agent is the lab's cleaning agent player, nil unless Options.Agent.
func (l *Lab) Agent() *Agent { return l.agent }

// Ramdisk is the lab's ramdisk player, nil without an inspector.
func (l *Lab) Ramdisk() *Ramdisk { return l.ramdisk }

// Close stops the lab's servers and goroutines. Its files stay.
func (l *Lab) Close() {
	l.once.Do(func() {
		if l.cancel != nil {
			l.cancel()
		}
		l.wg.Wait()
		for _, b := range l.BMCs {
			_ = b.srv.Close()
			<-b.served
		}
		if l.netbox != nil {
			l.netbox.Close()
		}
		if l.ssh != nil {
			l.ssh.Close()
		}
		if l.lock != nil {
			_ = l.lock.Close()
		}
	})
}

// quietLog drops the servers' own log lines (TLS handshakes a client
// abandons, connections an emulated BMC reset drops).
var quietLog = log.New(io.Discard, "", 0)

// startBMC serves one emulator over TLS on a loopback port, with the
// factory credential, the host's frontend NICs and their link states.
func startBMC(h *fakes.Host, factory map[string]string, bt BMCTiming, tlsCfg *tls.Config) (*BMC, error) {
	vendor := fakes.VendorFor(h.Spec)
	if !known(vendor) {
		vendor = "dell"
	}
	user, pw := factory[bmc.FieldUsername], factory[bmc.FieldPassword]
	emu, err := redfishemu.New(vendor, redfishemu.Options{AdminPassword: pw})
	if err != nil {
		return nil, err
	}
	// The tree's administrator becomes the site's factory account.
	if err := renameAdmin(emu, emu.AdminUser(), pw, user); err != nil {
		return nil, err
	}
	emu.ResetDowntime, emu.HostBootTime, emu.ScheduleDelay, emu.RunDuration = bt.ResetDowntime, bt.HostBootTime, bt.ScheduleDelay, bt.RunDuration
	if err := SetHostNICs(emu, user, pw, h.NICs); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: emu, TLSConfig: tlsCfg.Clone(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: quietLog}
	b := &BMC{Host: h.Name, Address: h.OOBIP, Endpoint: ln.Addr().String(), Emulator: emu, srv: srv, served: make(chan struct{})}
	go func() { defer close(b.served); _ = srv.ServeTLS(ln, "", "") }()
	return b, nil
}

func known(vendor string) bool {
	for _, v := range redfishemu.Vendors {
		if v == vendor {
			return true
		}
	}
	return false
}

// configYAML is lab.yaml.
func (l *Lab) configYAML(o Options, t *SSHTarget, timing wiring.IronicTiming) (string, error) {
	ironicURL := o.IronicURL
	if ironicURL == "" {
		ironicURL = "http://127.0.0.1:6385"
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# hostforge lab: the rack served on loopback by 'hostforge lab' (%s).\n", time.Now().UTC().Format(time.RFC3339))
	w("# Valid while that lab runs; every run writes a new one.\n")
	site := o.SiteName
	if site == "" {
		site = enrolltest.DemoSite
	}
	w("site: %s\n", site)
	w("netbox:\n  url: %s\n  token_file: %s\n  ca_file: %s\n", l.NetBoxURL, q(filepath.Join(l.Dir, TokenFile)), q(filepath.Join(l.Dir, CAFile)))
	cfg := enrolltest.DemoSiteConfig()
	// One Ironic is one instance: every device class routes to it. (Two
	// instance names on one Ironic would list every node twice, and the
	// ledger's projection rightly leaves a device found on two instances
	// alone.)
	classes := make([]string, 0, len(cfg.IronicInstances))
	for class := range cfg.IronicInstances {
		classes = append(classes, class)
	}
	sort.Strings(classes)
	w("ironic:\n")
	w("  - name: %s\n    url: %s\n    device_classes: [%s]\n    timing:\n", IronicInstance, ironicURL, strings.Join(classes, ", "))
	for _, f := range timingFields(timing) {
		if f.d > 0 {
			w("      %s: %s\n", f.key, f.d.D())
		}
	}
	w("gates:\n  enrollment_configure_dhcp: true\n  enrollment_configure_bmc: true\n  enrollment_ironic_enrol: %t\n", l.Ironic)
	w("  platform_class_activity_ready: true\n  enrol_project: %s\n  node_lock_max_wait: 2m\n  cleaning_deadline: 10m\n", cfg.EnrolProject)
	hostsDir := filepath.Join(l.Dir, DHCPDir, "hostforge.d")
	w("dhcp:\n  host: %s\n  user: %s\n  flavour: isc\n  dir: %s\n", q(t.Addr), q(t.User), q(hostsDir))
	w("  config_test: %s\n", q("sh "+dhcp.ShellQuote(filepath.Join(l.Dir, DHCPDir, "check"))))
	w("  restart: %s\n", q("sh "+dhcp.ShellQuote(filepath.Join(l.Dir, DHCPDir, "restart"))))
	w("  status: %s\n", q("test -s "+dhcp.ShellQuote(filepath.Join(l.Dir, DHCPDir, "restarts.log"))))
	w("  timeouts: {connect: 10s, login: 10s, command: 30s, transfer: 30s}\n")
	w("bmc:\n  ca_file: %s\n  endpoints:\n", q(filepath.Join(l.Dir, CAFile)))
	for _, h := range l.Hosts {
		if bm, ok := l.BMCs[h]; ok {
			w("    - {address: %s, endpoint: %s}   # %s, %s\n", bm.Address, q(bm.Endpoint), h, bm.Emulator.Vendor())
		}
	}
	w("vault:\n  kind: file\n  path: %s\n", q(filepath.Join(l.Dir, VaultFile)))
	w("ledger:\n  driver: sqlite\n  path: %s\n  projection_interval: %s\n", q(filepath.Join(l.Dir, LedgerFile)), LedgerProjectionInterval)
	return b.String(), nil
}

// q quotes a YAML scalar.
func q(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func timingFields(t wiring.IronicTiming) []struct {
	key string
	d   enrollment.Duration
} {
	return []struct {
		key string
		d   enrollment.Duration
	}{
		{"state_poll", t.StatePoll}, {"state_poll_max", t.StatePollMax},
		{"lock_retry", t.LockRetry}, {"inspection_poll", t.InspectionPoll}, {"inspection_poll_max", t.InspectionPollMax},
		{"inspection_timeout", t.InspectionTimeout}, {"power_on_timeout", t.PowerOnTimeout}, {"link_budget", t.LinkBudget},
		{"clean_poll_min", t.CleanPollMin}, {"clean_poll_max", t.CleanPollMax}, {"inventory_grace", t.InventoryGrace},
	}
}

// writeDHCPScripts writes the lab DHCP server's config test and restart:
// the config test assembles the host files into one dhcpd.conf and checks
// it with the real dhcpd when one is installed; a restart is a line in
// restarts.log, which the status command checks.
func writeDHCPScripts(dir string) error {
	d := filepath.Join(dir, DHCPDir)
	check := "#!/bin/sh\n# The lab DHCP server's config test (hostforge lab).\nset -e\ncd " + dhcp.ShellQuote(d) + "\n" +
		"cat hostforge.d/*.conf > dhcpd.conf 2>/dev/null || : > dhcpd.conf\n" +
		"if command -v dhcpd >/dev/null 2>&1; then dhcpd -t -q -cf dhcpd.conf; fi\n"
	restart := "#!/bin/sh\n# The lab DHCP server's restart (hostforge lab).\ndate -u +%Y-%m-%dT%H:%M:%SZ >> " + dhcp.ShellQuote(filepath.Join(d, "restarts.log")) + "\n"
	if err := os.WriteFile(filepath.Join(d, "check"), []byte(check), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(d, "restart"), []byte(restart), 0o755)
}

// fakeHardware points every host's ironic_settings at Ironic's
// fake-hardware driver (there is no real machine behind the emulated BMC),
// inspecting through ironic-inspector when the lab has one (the lab plays
// the ramdisk) and with Ironic's fake inspection otherwise; with agent the
// deploy interface is direct, whose cleaning runs the agent's steps (the lab
// plays the agent).
func fakeHardware(site *fakes.Site, inspector, agent bool) {
	inspect := "fake"
	if inspector {
		inspect = "inspector"
	}
	names := site.HostNames()
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error {
		for _, n := range names {
			d := st.DeviceByName(n)
			if d == nil || d.ConfigContext == nil {
				continue
			}
			is, ok := d.ConfigContext["ironic_settings"].(map[string]any)
			if !ok {
				continue
			}
			is["driver"] = ironic.DriverFakeHardware
			ifs := map[string]any{"inspect": inspect, "raid": "fake", "network": "noop"}
			if agent {
				ifs["deploy"] = "direct"
			}
			is["interfaces"] = ifs
		}
		return nil
	})
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "hostforge"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Summary is the lab's description for people: what runs where and the
// commands that enrol the rack.
func (l *Lab) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "NetBox emulator   %s (%d hosts of site %s)\n", l.NetBoxURL, len(l.Hosts), enrolltest.DemoSite)
	hosts := make([]string, 0, len(l.BMCs))
	for h := range l.BMCs {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	fmt.Fprintf(&b, "BMC emulators     %d, Redfish over TLS on 127.0.0.1:\n", len(hosts))
	for _, h := range hosts {
		bm := l.BMCs[h]
		fmt.Fprintf(&b, "                    %-18s %-11s %s (NetBox %s)\n", h, bm.Emulator.Vendor(), bm.Endpoint, bm.Address)
	}
	fmt.Fprintf(&b, "DHCP server (SSH) %s, files in %s\n", l.SSHAddr, filepath.Join(l.Dir, DHCPDir))
	fmt.Fprintf(&b, "Ledger (SQLite)   %s, projected from Ironic every %s by a worker\n", filepath.Join(l.Dir, LedgerFile), LedgerProjectionInterval)
	return b.String()
}
