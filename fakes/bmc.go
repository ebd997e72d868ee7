package fakes

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/link"
)

// The fake site's vault layout: the factory credential of every fake BMC
// as FactoryItem, the IPMI monitoring user as MonitoringItem, each host's
// admin credential as AdminItem(host). They equal enrollment's defaults
// (enrolltest checks that they agree).
const (
	FakeFactoryUser = "admin"
	fakeIPMIUser    = "ipmi_exporter"
	FactoryItem     = "bmc-factory"
	MonitoringItem  = "ipmi-exporter"
)

// AdminItem is the vault item of a fake host's per-host admin credential.
func AdminItem(host string) string { return "bmc-admin-" + host }

// BMCs is the site's fake BMC world: one BMC per host with an out-of-band
// address, reached by address. It implements bmc.Connector and the Ironic
// link guard's FrontendLinks.
type BMCs struct {
	site   *Site
	mu     sync.Mutex
	byAddr map[string]*FakeBMC
	byHost map[string]*FakeBMC
	timing *BMCTiming
}

// BMCTiming is how long a fake BMC takes to schedule a staged iDRAC job,
// to run it once the host is reset, and to come back from a cold reset.
type BMCTiming struct {
	JobSchedule, JobRun, ResetDowntime time.Duration
}

// DefaultBMCTiming is a fake BMC's timing: 30 s, 3 min and 90 s, as real
// ones take.
var DefaultBMCTiming = BMCTiming{JobSchedule: 30 * time.Second, JobRun: 3 * time.Minute, ResetDowntime: 90 * time.Second}

// SetTiming sets the timing of every BMC of the site, present and to come.
// Programs that run the fakes on wall-clock time (FollowWallClock) shorten
// it, so the BMC phase's waits take seconds.
func (b *BMCs) SetTiming(t BMCTiming) {
	b.mu.Lock()
	b.timing = &t
	all := make([]*FakeBMC, 0, len(b.byHost))
	for _, m := range b.byHost {
		all = append(all, m)
	}
	b.mu.Unlock()
	for _, m := range all {
		m.setTiming(t)
	}
}

func (m *FakeBMC) setTiming(t BMCTiming) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scheduleDelay, m.runDuration, m.resetDowntime = t.JobSchedule, t.JobRun, t.ResetDowntime
}

func newBMCs(s *Site) *BMCs {
	return &BMCs{site: s, byAddr: map[string]*FakeBMC{}, byHost: map[string]*FakeBMC{}}
}

// Of returns a host's BMC.
func (b *BMCs) Of(host string) (*FakeBMC, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := b.byHost[host]
	return m, ok
}

// VendorFor is the BMC vendor a host gets: HostSpec.Vendor, else from the
// manufacturer (Dell→dell, Lenovo→lenovo, NVIDIA/AMI→ami,
// Supermicro→supermicro); any other manufacturer gets a BMC of that name,
// which vendor detection refuses.
func VendorFor(spec HostSpec) string {
	if spec.Vendor != "" {
		return spec.Vendor
	}
	switch strings.ToLower(spec.Manufacturer) {
	case "dell", "dell inc.":
		return string(bmc.VendorDell)
	case "lenovo":
		return string(bmc.VendorLenovo)
	case "nvidia", "ami":
		return string(bmc.VendorAMI)
	case "supermicro":
		return string(bmc.VendorSupermicro)
	}
	return strings.ToLower(spec.Manufacturer)
}

// addHost creates the host's BMC in a converged-credential, drifted-settings
// state and stores its per-host admin credential in the vault.
func (b *BMCs) addHost(h *Host) {
	if h.OOBIP == "" {
		return
	}
	b.site.mu.Lock()
	n := b.site.hostSeq
	b.site.mu.Unlock()
	pw := fmt.Sprintf("hf-admin-%s-%04d", h.Name, n)
	m := NewFakeBMC(b.site, VendorFor(h.Spec), h)
	m.setAdminPassword(pw)
	b.mu.Lock()
	if b.timing != nil {
		m.setTiming(*b.timing)
	}
	b.mu.Unlock()
	b.site.Vault.Set(AdminItem(h.Name), map[string]string{bmc.FieldUsername: FakeFactoryUser, bmc.FieldPassword: pw})
	b.mu.Lock()
	b.byAddr[h.OOBIP] = m
	b.byHost[h.Name] = m
	b.mu.Unlock()
}

// seedBMCVault stores the site-wide factory and monitoring credentials.
func (s *Site) seedBMCVault() {
	s.Vault.Set(FactoryItem, map[string]string{bmc.FieldUsername: FakeFactoryUser, bmc.FieldPassword: FakeFactoryPassword})
	s.Vault.Set(MonitoringItem, map[string]string{bmc.FieldUsername: fakeIPMIUser, bmc.FieldPassword: "hf-ipmi-exporter-site"})
}

// FakeFactoryPassword is the factory password of every fake BMC.
const FakeFactoryPassword = "hf-factory-default"

// Connect implements bmc.Connector.
func (b *BMCs) Connect(ctx context.Context, address string, cred bmc.Credential) (bmc.Client, error) {
	b.mu.Lock()
	m := b.byAddr[address]
	b.mu.Unlock()
	if m == nil {
		b.site.calls.add(SysBMC, "connect", false)
		return nil, fmt.Errorf("bmc %s: no route to host: %w", address, hostforge.ErrUnavailable)
	}
	return m.Connect(ctx, address, cred)
}

// FrontendLinks reports each MAC's link state from the hosts' physical NICs
// (Host.NICs[i].Link "up"/"down"/"unknown"); a MAC the BMC does not know is
// UNKNOWN. A BMC made unable to observe links returns a Failure.
func (b *BMCs) FrontendLinks(ctx context.Context, bmcAddress, credentialItem string, macs []string) (map[string]link.State, error) {
	b.mu.Lock()
	m := b.byAddr[bmcAddress]
	b.mu.Unlock()
	if m == nil {
		b.site.calls.add(SysBMC, "frontend_links", false)
		return nil, bmc.LinkUnobservable.New("%s: no BMC answers at this address", bmcAddress)
	}
	// Like the Redfish reader: log in with the per-host credential the
	// named vault item holds.
	cred, err := bmc.AdminCredential(ctx, b.site.Vault, credentialItem)
	if err != nil {
		return nil, err
	}
	if err := m.enter(ctx, "frontend_links", false, false); err != nil {
		return nil, bmc.LinkUnobservable.Wrap(err, "%s: reading link state", bmcAddress)
	}
	if !m.accepts(cred) {
		return nil, bmc.LinkUnobservable.Wrap(bmc.HTTPError(http.StatusUnauthorized, "Base.1.8.NoValidSession"), "%s: the per-host credential in %q was refused", bmcAddress, credentialItem)
	}
	m.mu.Lock()
	noLinks := m.noLinks
	m.mu.Unlock()
	if noLinks {
		return nil, bmc.LinkUnobservable.New("%s: this BMC model does not report host NIC link state", bmcAddress)
	}
	nics := m.hostNICs()
	return bmc.LinkStates(nics, macs), nil
}

// ---- one fake BMC ---------------------------------------------------------

// FakeBMC is one in-memory BMC with a vendor profile. Its knobs inject the
// behaviours the strategies must survive.
type FakeBMC struct {
	site   *Site
	host   *Host
	vendor string

	mu           sync.Mutex
	identity     bmc.Identity
	accounts     []*fakeAccount
	nextAcct     int
	net          bmc.ManagerNetwork
	syslog       []string
	bios         map[string]any
	biosPending  map[string]any
	options      []bmc.BootOption
	order        []string
	pendingOrder []string
	jobs         []*fakeJob
	nextJob      int
	downUntil    time.Time

	// knobs
	busy          int
	busyMsg       string
	bootingUntil  time.Time
	neverSchedule bool
	scheduleDelay time.Duration
	runDuration   time.Duration
	resetDowntime time.Duration
	noAccounts    bool
	noLinks       bool
	// applyOnReset: a password change is staged and applied by the next
	// cold reset, as some BMCs do.
	applyOnReset bool
	// lose makes the next n calls of an op apply, then lose their answer.
	lose map[string]int
	// refusePasswords refuses the next n password writes, echoing the value.
	refusePasswords int

	managerResets int
	systemResets  int
}

type fakeAccount struct {
	bmc.Account
	password string
	// staged is a password set on a BMC that applies it on reset.
	staged string
	// changes counts changes to a new password value (applied or staged).
	changes int
}

type fakeJob struct {
	bmc.Job
	created, started time.Time
	attrs            map[string]any
	order            []string
}

// NewFakeBMC returns a BMC of vendor for host (host may be nil), in a
// drifted state: the configuration a BMC ships with, not the site's.
func NewFakeBMC(site *Site, vendor string, host *Host) *FakeBMC {
	m := &FakeBMC{site: site, host: host, vendor: vendor}
	m.setTiming(DefaultBMCTiming)
	m.accounts = []*fakeAccount{{Account: bmc.Account{ID: "2", UserName: FakeFactoryUser, Role: "Administrator", Enabled: true}, password: FakeFactoryPassword}}
	m.nextAcct = 3
	m.net = bmc.ManagerNetwork{Hostname: vendor + "-bmc", NTPServers: []string{"pool.ntp.org"}, Protocols: map[string]bool{}}
	var nics []PhysNIC
	if host != nil {
		nics = host.NICs
	}
	switch vendor {
	case string(bmc.VendorDell):
		m.identity = bmc.Identity{Vendor: "Dell", Product: "Integrated Dell Remote Access Controller", RootOem: []string{"Dell"}, ManagerModel: "15G Monolithic", ManagerOem: []string{"Dell"}, SystemManufacturer: "Dell Inc."}
		m.net.Protocols = map[string]bool{"HTTP": true, "Telnet": false}
		m.net.IPMIOverLAN = true
		m.bios = map[string]any{"BootMode": "Uefi", "ProcVirtualization": "Disabled", "SriovGlobalEnable": "Disabled", "AcPwrRcvry": "Last"}
	case string(bmc.VendorLenovo):
		m.identity = bmc.Identity{Vendor: "Lenovo", ManagerModel: "Lenovo XClarity Controller", ManagerOem: []string{"Lenovo"}, SystemManufacturer: "Lenovo"}
		m.net.Protocols = map[string]bool{"HTTP": true, "SSDP": true}
		m.bios = map[string]any{"BootModes_SystemBootMode": "UEFIMode", "Processors_IntelVirtualizationTechnology": "Disabled", "DevicesandIOPorts_IntelVTforDirectedIOVTd": "Disabled", "OperatingModes_ChooseOperatingMode": "Efficiency"}
	case string(bmc.VendorAMI):
		m.identity = bmc.Identity{Vendor: "AMI", Product: "AMI Redfish Server", RootOem: []string{"Ami"}, ManagerOem: []string{"Ami"}, SystemManufacturer: "NVIDIA"}
		m.net.Protocols = map[string]bool{"SSDP": true}
		m.net.IPMIOverLAN = true
	case string(bmc.VendorSupermicro):
		m.identity = bmc.Identity{RootOem: []string{"Supermicro"}, ManagerModel: "ASPEED", ManagerOem: []string{"Supermicro"}, SystemManufacturer: "Supermicro"}
		m.net.Protocols = map[string]bool{"HTTP": true, "SSDP": true}
		m.net.IPMIOverLAN = true
	default:
		m.identity = bmc.Identity{Vendor: vendor, Product: vendor + " BMC"}
	}
	m.options, m.order = fakeBootOptions(vendor, nics)
	m.biosPending = map[string]any{}
	return m
}

// fakeBootOptions lays out a disk, the frontend NICs' PXE options, an
// onboard NIC NetBox does not know, virtual media and (AMI) a shell, with
// the disk first.
func fakeBootOptions(vendor string, nics []PhysNIC) ([]bmc.BootOption, []string) {
	on := func() *bool { v := true; return &v }
	var opts []bmc.BootOption
	add := func(name, path string) {
		id := fmt.Sprintf("Boot%04X", len(opts))
		o := bmc.BootOption{ID: id, DisplayName: name, UefiDevicePath: path, Enabled: on()}
		if vendor == string(bmc.VendorSupermicro) {
			o.Enabled = nil
		}
		opts = append(opts, o)
	}
	add("ubuntu", "HD(1,GPT,6634D938-1211-4F7A-89C6-A35A60BE1E4A,0x800,0x219800)/\\EFI\\ubuntu\\shimx64.efi")
	for k, n := range append(append([]PhysNIC(nil), nics...), PhysNIC{Name: "onboard", MAC: "02:0e:00:00:00:01"}) {
		hex := strings.ToUpper(strings.ReplaceAll(n.MAC, ":", ""))
		add(fmt.Sprintf("UEFI: PXE IPv4 %s", n.Name),
			fmt.Sprintf("PciRoot(0x0)/Pci(0x1C,0x%X)/Pci(0x0,0x0)/MAC(%s,0x1)/IPv4(0.0.0.0,0x0,DHCP,0.0.0.0,0.0.0.0,0.0.0.0)", k, hex))
	}
	add("Virtual CD", "VenHw(B2AD3248-4F72-4950-A966-CFE5062DB83A,02000000)")
	if vendor == string(bmc.VendorAMI) {
		add("UEFI: Built-in EFI Shell", "Fv(5023B95C-DB26-429B-A648-BD47664C8012)/FvFile(7C04A583-9E3E-4F1C-AD65-E05268D0B4D1)")
	}
	order := make([]string, len(opts))
	for i, o := range opts {
		order[i] = o.ID
	}
	return opts, order
}

// ---- knobs ---------------------------------------------------------------

// Vendor returns the BMC's vendor profile.
func (m *FakeBMC) Vendor() string { return m.vendor }

// Busy makes the next n configuration writes answer 503 with msg.
func (m *FakeBMC) Busy(n int, msg string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.busy, m.busyMsg = n, msg
}

// HostBooting makes boot writes answer 503 for d, as an AMI BMC does while
// its host boots.
func (m *FakeBMC) HostBooting(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bootingUntil = m.site.Clock.Now().Add(d)
}

// NeverScheduleJobs keeps staged iDRAC jobs in Scheduling forever.
func (m *FakeBMC) NeverScheduleJobs() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.neverSchedule = true
}

// JobTiming sets how long a staged iDRAC job takes to be scheduled (30 s
// by default) and to run once the host is reset (3 min).
func (m *FakeBMC) JobTiming(schedule, run time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scheduleDelay, m.runDuration = schedule, run
}

// NoAccountEndpoint models a BMC without an IPMI-user (accounts) endpoint.
func (m *FakeBMC) NoAccountEndpoint() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.noAccounts = true
}

// NoLinkState models a BMC that cannot report host NIC link state.
func (m *FakeBMC) NoLinkState() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.noLinks = true
}

// ApplyPasswordOnReset gives the BMC the profile of models that apply a
// change of an existing account's password only on their next cold reset:
// until then the old password keeps working and the new one is refused. A
// new account gets its password at once.
func (m *FakeBMC) ApplyPasswordOnReset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.applyOnReset = true
}

// ResetDowntime sets how long a cold reset keeps the BMC from answering
// (90 s by default).
func (m *FakeBMC) ResetDowntime(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.resetDowntime = d
}

// LoseAnswers makes the next n calls of op (a client operation name as
// counted in the site's calls, e.g. "set_password", "reset_manager") take
// effect and then lose their answer: the caller sees a dropped connection.
func (m *FakeBMC) LoseAnswers(op string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lose == nil {
		m.lose = map[string]int{}
	}
	m.lose[op] = n
}

// RefusePasswords makes the next n password writes (a password change, or
// an account created with a password) fail with HTTP 400
// PropertyValueFormatError, the refused value echoed in the message as
// DMTF's Base registry words it ("The value %1 for the property %2 ..."):
// the answer real BMCs give, and the way a secret reaches an error.
func (m *FakeBMC) RefusePasswords(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refusePasswords = n
}

// refusedLocked is the echoing refusal of a password write RefusePasswords
// asked for, or nil. Call it with m.mu held.
func (m *FakeBMC) refusedLocked(password string) error {
	if m.refusePasswords <= 0 {
		return nil
	}
	m.refusePasswords--
	return bmc.HTTPError(http.StatusBadRequest, fmt.Sprintf("Base.1.8.PropertyValueFormatError: The value '%s' for the property Password is of a different format than the property can accept.", password))
}

// PasswordChanges counts the changes of a user's password to a new value,
// applied at once or staged for a reset: one rotation is one change.
func (m *FakeBMC) PasswordChanges(user string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.accounts {
		if a.UserName == user {
			return a.changes
		}
	}
	return 0
}

// FactoryReset puts the admin account back on the factory password.
func (m *FakeBMC) FactoryReset() { m.setAdminPassword(FakeFactoryPassword) }

func (m *FakeBMC) setAdminPassword(pw string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.accounts {
		if a.UserName == FakeFactoryUser {
			a.password, a.staged = pw, ""
		}
	}
}

// SetIdentity replaces what the BMC says about itself.
func (m *FakeBMC) SetIdentity(id bmc.Identity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.identity = id
}

// StageRunningJob models a BIOS change another reboot already carried into
// the Lifecycle Controller: the attributes are pending and their job Running.
func (m *FakeBMC) StageRunningJob(attrs map[string]any) string {
	return m.StageJob(attrs, bmc.JobRunning)
}

// StageJob stages BIOS attributes as an iDRAC job in the given state (a
// Scheduled one blocks later settings writes until it runs or is deleted).
func (m *FakeBMC) StageJob(attrs map[string]any, state string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.site.Clock.Now()
	for k, v := range attrs {
		m.biosPending[k] = v
	}
	j := m.newJobLocked(now)
	j.attrs, j.State, j.started = cloneMap(attrs), state, now
	return j.ID
}

// State is a snapshot of the BMC's configuration, for assertions.
type BMCState struct {
	Network       bmc.ManagerNetwork
	Syslog        []string
	Bios          map[string]any
	BiosPending   map[string]any
	Options       []bmc.BootOption
	Order         []string
	PendingOrder  []string
	Jobs          []bmc.Job
	Accounts      []bmc.Account
	ManagerResets int
	SystemResets  int
}

// State returns a snapshot.
func (m *FakeBMC) State() BMCState {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tickLocked()
	s := BMCState{Network: cloneNet(m.net), Syslog: slices.Clone(m.syslog), Bios: cloneMap(m.bios), BiosPending: cloneMap(m.biosPending),
		Order: slices.Clone(m.order), PendingOrder: slices.Clone(m.pendingOrder), ManagerResets: m.managerResets, SystemResets: m.systemResets}
	for _, o := range m.options {
		s.Options = append(s.Options, cloneOption(o))
	}
	for _, j := range m.jobs {
		s.Jobs = append(s.Jobs, j.Job)
	}
	for _, a := range m.accounts {
		s.Accounts = append(s.Accounts, a.Account)
	}
	return s
}

// Password returns an account's password, for tests that check rotation.
func (m *FakeBMC) Password(user string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.accounts {
		if a.UserName == user {
			return a.password
		}
	}
	return ""
}

// StagedPassword returns the password a reset-to-apply BMC holds for user
// until its next cold reset ("" when none is staged).
func (m *FakeBMC) StagedPassword(user string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.accounts {
		if a.UserName == user {
			return a.staged
		}
	}
	return ""
}

// ---- the client -------------------------------------------------------------

// Connect verifies the credential (a read) and returns a client that, like
// the Redfish adapter's basic auth, presents the credential again on every
// call: a password changed under it is refused on the next call.
func (m *FakeBMC) Connect(ctx context.Context, _ string, cred bmc.Credential) (bmc.Client, error) {
	if err := m.enter(ctx, "connect", false, false); err != nil {
		return nil, err
	}
	if m.accepts(cred) {
		return &fakeBMCClient{m: m, cred: cred}, nil
	}
	return nil, errNoValidSession()
}

func errNoValidSession() error {
	return bmc.HTTPError(http.StatusUnauthorized, "Base.1.8.NoValidSession: There is no valid session established with the implementation.")
}

// accepts reports whether an enabled account has this user name and password.
func (m *FakeBMC) accepts(cred bmc.Credential) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.accounts {
		if a.UserName == cred.Username && a.password == cred.Password && a.Enabled {
			return true
		}
	}
	return false
}

// enter counts the call, applies injected faults, downtime and busy answers.
func (m *FakeBMC) enter(ctx context.Context, op string, write, boot bool) error {
	if err := m.site.enter(ctx, SysBMC, op, write); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.site.Clock.Now()
	if now.Before(m.downUntil) {
		return fmt.Errorf("bmc: connection refused (resetting): %w", hostforge.ErrUnavailable)
	}
	if write && m.busy > 0 {
		m.busy--
		return bmc.HTTPError(http.StatusServiceUnavailable, m.busyMsg)
	}
	if write && boot && now.Before(m.bootingUntil) {
		return bmc.HTTPError(http.StatusServiceUnavailable, "The host is booting; boot configuration is unavailable until POST completes.")
	}
	return nil
}

// tickLocked advances job states with the clock.
func (m *FakeBMC) tickLocked() {
	now := m.site.Clock.Now()
	for _, j := range m.jobs {
		switch j.State {
		case bmc.JobScheduling:
			if !m.neverSchedule && !now.Before(j.created.Add(m.scheduleDelay)) {
				j.State = bmc.JobScheduled
			}
		case bmc.JobRunning:
			if !now.Before(j.started.Add(m.runDuration)) {
				j.State, j.Message = bmc.JobCompleted, "Job completed successfully."
				for k, v := range j.attrs {
					m.bios[k] = v
					delete(m.biosPending, k)
				}
				if j.order != nil {
					m.order, m.pendingOrder = j.order, nil
				}
			}
		}
	}
}

func (m *FakeBMC) newJobLocked(now time.Time) *fakeJob {
	m.nextJob++
	j := &fakeJob{Job: bmc.Job{ID: fmt.Sprintf("JID_%012d", 100000000000+m.nextJob), Name: "ConfigBIOS:BIOS.Setup.1-1", State: bmc.JobScheduling, Message: "Task successfully scheduled."}, created: now}
	m.jobs = append(m.jobs, j)
	return j
}

// stageJobLocked refuses a staged write while a configuration job is
// queued or running, as iDRAC does.
func (m *FakeBMC) stageCheckLocked() error {
	for _, j := range m.jobs {
		switch j.State {
		case bmc.JobRunning:
			return bmc.HTTPError(http.StatusBadRequest, "IDRAC.2.8.SYS011: Pending configuration values are already committed, unable to perform another set operation.")
		case bmc.JobNew, bmc.JobScheduling, bmc.JobScheduled:
			return bmc.HTTPError(http.StatusBadRequest, "IDRAC.2.8.LC068: Lifecycle Controller is currently in use by another process. A configuration job is already pending; delete it or wait for it to complete.")
		}
	}
	return nil
}

func (m *FakeBMC) hostNICs() []bmc.HostNIC {
	if m.host == nil {
		return nil
	}
	var out []bmc.HostNIC
	for _, n := range m.host.NICs {
		st := ""
		switch n.Link {
		case "up":
			st = "LinkUp"
		case "down":
			st = "LinkDown"
		}
		out = append(out, bmc.HostNIC{MAC: n.MAC, LinkStatus: st})
	}
	return out
}

type fakeBMCClient struct {
	m    *FakeBMC
	cred bmc.Credential
}

// enter is the BMC's entry for one request of this client: faults,
// downtime and busy answers, then the credential checked again.
func (c *fakeBMCClient) enter(ctx context.Context, op string, write, boot bool) error {
	if err := c.m.enter(ctx, op, write, boot); err != nil {
		return err
	}
	if !c.m.accepts(c.cred) {
		return errNoValidSession()
	}
	return nil
}

// answer is the end of a request that took effect: its answer, or a
// dropped connection when LoseAnswers asked for one. Call it with m.mu held.
func (m *FakeBMC) answerLocked(op string) error {
	if m.lose[op] > 0 {
		m.lose[op]--
		return fmt.Errorf("bmc: %s: connection reset by peer before the answer: %w", op, hostforge.ErrUnavailable)
	}
	return nil
}

func (c *fakeBMCClient) Identify(ctx context.Context) (bmc.Identity, error) {
	if err := c.enter(ctx, "identify", false, false); err != nil {
		return bmc.Identity{}, err
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	id := c.m.identity
	id.RootOem, id.ManagerOem = slices.Clone(id.RootOem), slices.Clone(id.ManagerOem)
	return id, nil
}

func (c *fakeBMCClient) ListAccounts(ctx context.Context) ([]bmc.Account, error) {
	if err := c.enter(ctx, "list_accounts", false, false); err != nil {
		return nil, err
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.m.noAccounts {
		return nil, fmt.Errorf("AccountService/Accounts: %w", bmc.ErrUnsupported)
	}
	var out []bmc.Account
	for _, a := range c.m.accounts {
		out = append(out, a.Account)
	}
	return out, nil
}

func (c *fakeBMCClient) account(id string) *fakeAccount {
	for _, a := range c.m.accounts {
		if a.ID == id {
			return a
		}
	}
	return nil
}

func (c *fakeBMCClient) SetPassword(ctx context.Context, id, password string) (err error) {
	if err := c.enter(ctx, "set_password", true, false); err != nil {
		return err
	}
	defer c.m.site.answer(ctx, SysBMC, "set_password", &err)
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	a := c.account(id)
	if a == nil {
		return bmc.HTTPError(http.StatusNotFound, "account "+id+" not found")
	}
	if err := c.m.refusedLocked(password); err != nil {
		return err
	}
	if len(password) < 8 {
		return bmc.HTTPError(http.StatusBadRequest, "Base.1.8.PropertyValueFormatError: the password does not meet the complexity requirements.")
	}
	if c.m.applyOnReset {
		if password != a.password && password != a.staged {
			a.changes++
		}
		a.staged = password
	} else {
		if password != a.password {
			a.changes++
		}
		a.password = password
	}
	return c.m.answerLocked("set_password")
}

func (c *fakeBMCClient) CreateAccount(ctx context.Context, a bmc.Account, password string) (_ string, err error) {
	if err := c.enter(ctx, "create_account", true, false); err != nil {
		return "", err
	}
	defer c.m.site.answer(ctx, SysBMC, "create_account", &err)
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.m.noAccounts {
		return "", bmc.HTTPError(http.StatusMethodNotAllowed, "accounts cannot be created")
	}
	if err := c.m.refusedLocked(password); err != nil {
		return "", err
	}
	for _, x := range c.m.accounts {
		if x.UserName == a.UserName {
			return "", bmc.HTTPError(http.StatusBadRequest, "Base.1.8.ResourceAlreadyExists: user "+a.UserName+" exists")
		}
	}
	if len(c.m.accounts) >= 16 {
		return "", bmc.HTTPError(http.StatusBadRequest, "no free account slot")
	}
	a.ID = fmt.Sprint(c.m.nextAcct)
	c.m.nextAcct++
	c.m.accounts = append(c.m.accounts, &fakeAccount{Account: a, password: password})
	return a.ID, c.m.answerLocked("create_account")
}

func (c *fakeBMCClient) UpdateAccount(ctx context.Context, a bmc.Account) (err error) {
	if err := c.enter(ctx, "update_account", true, false); err != nil {
		return err
	}
	defer c.m.site.answer(ctx, SysBMC, "update_account", &err)
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	x := c.account(a.ID)
	if x == nil {
		return bmc.HTTPError(http.StatusNotFound, "account "+a.ID+" not found")
	}
	x.Role, x.Enabled = a.Role, a.Enabled
	return c.m.answerLocked("update_account")
}

func (c *fakeBMCClient) ManagerNetwork(ctx context.Context) (bmc.ManagerNetwork, error) {
	if err := c.enter(ctx, "manager_network", false, false); err != nil {
		return bmc.ManagerNetwork{}, err
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return cloneNet(c.m.net), nil
}

func (c *fakeBMCClient) SetManagerNetwork(ctx context.Context, p bmc.NetworkPatch) (err error) {
	if err := c.enter(ctx, "set_manager_network", true, false); err != nil {
		return err
	}
	defer c.m.site.answer(ctx, SysBMC, "set_manager_network", &err)
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	n := &c.m.net
	if p.Hostname != nil {
		n.Hostname = *p.Hostname
	}
	if p.DHCP != nil {
		n.DHCP = *p.DHCP
	}
	if p.NTPEnabled != nil {
		n.NTPEnabled = *p.NTPEnabled
	}
	if p.NTPServers != nil {
		n.NTPServers = slices.Clone(p.NTPServers)
	}
	if p.IPMIOverLAN != nil {
		n.IPMIOverLAN = *p.IPMIOverLAN
	}
	if p.VirtualMedia != nil {
		n.VirtualMedia = *p.VirtualMedia
	}
	for k, v := range p.Protocols {
		if _, ok := n.Protocols[k]; !ok {
			return bmc.HTTPError(http.StatusBadRequest, "Base.1.8.PropertyUnknown: "+k)
		}
		n.Protocols[k] = v
	}
	return c.m.answerLocked("set_manager_network")
}

func (c *fakeBMCClient) SyslogServers(ctx context.Context) ([]string, error) {
	if err := c.enter(ctx, "syslog", false, false); err != nil {
		return nil, err
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return slices.Clone(c.m.syslog), nil
}

func (c *fakeBMCClient) SetSyslogServers(ctx context.Context, servers []string) (err error) {
	if err := c.enter(ctx, "set_syslog", true, false); err != nil {
		return err
	}
	defer c.m.site.answer(ctx, SysBMC, "set_syslog", &err)
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	// Per-vendor limits: iDRAC keeps three servers, Lenovo and Supermicro one.
	limit := map[string]int{string(bmc.VendorDell): 3, string(bmc.VendorLenovo): 1, string(bmc.VendorSupermicro): 1}[c.m.vendor]
	if limit > 0 && len(servers) > limit {
		return bmc.HTTPError(http.StatusBadRequest, fmt.Sprintf("this BMC keeps %d syslog server(s), got %d", limit, len(servers)))
	}
	c.m.syslog = slices.Clone(servers)
	return c.m.answerLocked("set_syslog")
}

func (c *fakeBMCClient) BiosAttributes(ctx context.Context) (map[string]any, map[string]any, error) {
	if err := c.enter(ctx, "bios", false, false); err != nil {
		return nil, nil, err
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.tickLocked()
	return cloneMap(c.m.bios), cloneMap(c.m.biosPending), nil
}

func (c *fakeBMCClient) SetBiosAttributes(ctx context.Context, attrs map[string]any) (_ string, err error) {
	if err := c.enter(ctx, "set_bios", true, false); err != nil {
		return "", err
	}
	defer c.m.site.answer(ctx, SysBMC, "set_bios", &err)
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.tickLocked()
	for k := range attrs {
		if _, ok := c.m.bios[k]; !ok {
			return "", bmc.HTTPError(http.StatusBadRequest, "Base.1.8.PropertyUnknown: attribute "+k)
		}
	}
	switch c.m.vendor {
	case string(bmc.VendorDell):
		if err := c.m.stageCheckLocked(); err != nil {
			return "", err
		}
		for k, v := range attrs {
			c.m.biosPending[k] = v
		}
		j := c.m.newJobLocked(c.m.site.Clock.Now())
		j.attrs = cloneMap(attrs)
		return j.ID, nil
	case string(bmc.VendorLenovo):
		for k, v := range attrs {
			c.m.biosPending[k] = v
		}
		return "", nil
	}
	for k, v := range attrs {
		c.m.bios[k] = v
	}
	return "", nil
}

func (c *fakeBMCClient) BootOptions(ctx context.Context) ([]bmc.BootOption, error) {
	if err := c.enter(ctx, "boot_options", false, false); err != nil {
		return nil, err
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	var out []bmc.BootOption
	for _, o := range c.m.options {
		out = append(out, cloneOption(o))
	}
	return out, nil
}

func (c *fakeBMCClient) SetBootOptionEnabled(ctx context.Context, id string, enabled bool) (err error) {
	if err := c.enter(ctx, "set_boot_option", true, true); err != nil {
		return err
	}
	defer c.m.site.answer(ctx, SysBMC, "set_boot_option", &err)
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	for i := range c.m.options {
		if c.m.options[i].ID == id {
			if c.m.options[i].Enabled == nil {
				return bmc.HTTPError(http.StatusBadRequest, "Base.1.8.PropertyNotWritable: BootOptionEnabled")
			}
			c.m.options[i].Enabled = &enabled
			return c.m.answerLocked("set_boot_option")
		}
	}
	return bmc.HTTPError(http.StatusNotFound, "boot option "+id+" not found")
}

func (c *fakeBMCClient) BootOrder(ctx context.Context) ([]string, []string, error) {
	if err := c.enter(ctx, "boot_order", false, false); err != nil {
		return nil, nil, err
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.tickLocked()
	return slices.Clone(c.m.order), slices.Clone(c.m.pendingOrder), nil
}

func (c *fakeBMCClient) SetBootOrder(ctx context.Context, order []string) (_ string, err error) {
	if err := c.enter(ctx, "set_boot_order", true, true); err != nil {
		return "", err
	}
	defer c.m.site.answer(ctx, SysBMC, "set_boot_order", &err)
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.tickLocked()
	a, b := slices.Clone(order), slices.Clone(c.m.order)
	sort.Strings(a)
	sort.Strings(b)
	if !slices.Equal(a, b) {
		return "", bmc.HTTPError(http.StatusBadRequest, "Base.1.8.PropertyValueError: BootOrder must be a permutation of the existing boot references")
	}
	switch c.m.vendor {
	case string(bmc.VendorDell):
		if err := c.m.stageCheckLocked(); err != nil {
			return "", err
		}
		c.m.pendingOrder = slices.Clone(order)
		j := c.m.newJobLocked(c.m.site.Clock.Now())
		j.order = slices.Clone(order)
		return j.ID, nil
	case string(bmc.VendorLenovo):
		c.m.pendingOrder = slices.Clone(order)
		return "", nil
	}
	c.m.order = slices.Clone(order)
	return "", nil
}

func (c *fakeBMCClient) ListJobs(ctx context.Context) ([]bmc.Job, error) {
	if err := c.enter(ctx, "jobs", false, false); err != nil {
		return nil, err
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.m.vendor != string(bmc.VendorDell) {
		return nil, fmt.Errorf("job queue: %w", bmc.ErrUnsupported)
	}
	c.m.tickLocked()
	var out []bmc.Job
	for _, j := range c.m.jobs {
		out = append(out, j.Job)
	}
	return out, nil
}

func (c *fakeBMCClient) DeleteJob(ctx context.Context, id string) (err error) {
	if err := c.enter(ctx, "delete_job", true, false); err != nil {
		return err
	}
	defer c.m.site.answer(ctx, SysBMC, "delete_job", &err)
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	for i, j := range c.m.jobs {
		if j.ID == id {
			if j.State == bmc.JobRunning {
				return bmc.HTTPError(http.StatusBadRequest, "IDRAC.2.8.SUP018: a running job cannot be deleted")
			}
			for k := range j.attrs {
				delete(c.m.biosPending, k)
			}
			if j.order != nil {
				c.m.pendingOrder = nil
			}
			c.m.jobs = append(c.m.jobs[:i], c.m.jobs[i+1:]...)
			return c.m.answerLocked("delete_job")
		}
	}
	return bmc.HTTPError(http.StatusNotFound, "job "+id+" not found")
}

func (c *fakeBMCClient) ResetManager(ctx context.Context) (err error) {
	if err := c.enter(ctx, "reset_manager", true, false); err != nil {
		return err
	}
	defer c.m.site.answer(ctx, SysBMC, "reset_manager", &err)
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.managerResets++
	c.m.downUntil = c.m.site.Clock.Now().Add(c.m.resetDowntime)
	for _, a := range c.m.accounts {
		if a.staged != "" {
			a.password, a.staged = a.staged, ""
		}
	}
	return c.m.answerLocked("reset_manager")
}

func (c *fakeBMCClient) ResetSystem(ctx context.Context) (err error) {
	if err := c.enter(ctx, "reset_system", true, false); err != nil {
		return err
	}
	defer c.m.site.answer(ctx, SysBMC, "reset_system", &err)
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.systemResets++
	now := c.m.site.Clock.Now()
	c.m.tickLocked()
	switch c.m.vendor {
	case string(bmc.VendorDell):
		for _, j := range c.m.jobs {
			if j.State == bmc.JobScheduled {
				j.State, j.started = bmc.JobRunning, now
			}
		}
	default:
		for k, v := range c.m.biosPending {
			c.m.bios[k] = v
		}
		c.m.biosPending = map[string]any{}
		if c.m.pendingOrder != nil {
			c.m.order, c.m.pendingOrder = c.m.pendingOrder, nil
		}
	}
	return c.m.answerLocked("reset_system")
}

func (c *fakeBMCClient) HostNICs(ctx context.Context) ([]bmc.HostNIC, error) {
	if err := c.enter(ctx, "host_nics", false, false); err != nil {
		return nil, err
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.m.noLinks {
		return nil, fmt.Errorf("EthernetInterfaces: %w", bmc.ErrUnsupported)
	}
	return c.m.hostNICs(), nil
}

func cloneNet(n bmc.ManagerNetwork) bmc.ManagerNetwork {
	n.NTPServers = slices.Clone(n.NTPServers)
	p := make(map[string]bool, len(n.Protocols))
	for k, v := range n.Protocols {
		p[k] = v
	}
	n.Protocols = p
	return n
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func cloneOption(o bmc.BootOption) bmc.BootOption {
	if o.Enabled != nil {
		v := *o.Enabled
		o.Enabled = &v
	}
	return o
}
