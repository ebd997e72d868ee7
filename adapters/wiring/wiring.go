package wiring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/adapters/netbox"
	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/adapters/vault"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/verify"
)

// EnvNetBoxToken is the environment variable holding the NetBox token when
// the config names neither netbox.token_env nor netbox.token_file.
const EnvNetBoxToken = "HOSTFORGE_NETBOX_TOKEN"

// ConfigInvalid is a config file that cannot be used, or systems it names
// that cannot be wired (a CA file that does not read, a vault file others
// can read); the message names the file, the key and its line.
var ConfigInvalid = hostforge.Declare(hostforge.Spec{
	Code:      "CONFIG_INVALID",
	Phase:     "config",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: false,
	Action:    "Fix the key the message names at the line it gives in the --config file (every key is in docs/config.md; 'hostforge config example' prints a sample), then run the command again. Nothing was changed.",
})

// ConfigUnreadable is a config file that cannot be read at all: there is
// no key to fix, only the file to name or create.
var ConfigUnreadable = hostforge.Declare(hostforge.Spec{
	Code:      "CONFIG_UNREADABLE",
	Phase:     "config",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: false,
	Action:    "The --config file cannot be read (the message says why: it does not exist, is a directory, or this user may not read it): name the right file or create it (every key is in docs/config.md; 'hostforge config example' prints a sample), then run the command again. Nothing was contacted or changed.",
})

// Options are what the wiring takes from its caller besides the config.
type Options struct {
	// Log receives every adapter's structured log; nil discards.
	Log *slog.Logger
	// Getenv reads the environment variable a config names for a secret
	// (the NetBox token); nil reads the process environment.
	Getenv func(key string) string
	// IronicConnectTimeout bounds the microversion negotiation with each
	// Ironic instance at Open (60 s).
	IronicConnectTimeout time.Duration
	// Secrets is the process's set of secret values; nil: Open makes one.
	// The vault registers every secret it hands out in it, the adapters
	// register what they send (the NetBox token, BMC and driver_info
	// passwords) and scrub what remote systems answer with it, the
	// enrollment's steps leave scrubbed of it, and the logger Open hands
	// the adapters scrubs every line. A caller that prints or records what
	// the systems produce (CLI output, Temporal activities) scrubs with
	// Systems.Secrets.
	Secrets *hostforge.Secrets
	// SubmitOnly wires what a submitter needs — NetBox, the site's
	// configuration and the proof store — and none of the phases: a
	// process that only starts workflows on Temporal need not reach the
	// DHCP server, the BMCs or Ironic (the workers do).
	SubmitOnly bool
}

// Systems are the real systems a config file names, connected: what every
// CLI command, the Temporal worker and an embedding service run against.
type Systems struct {
	// Config is the config the systems were wired from.
	Config *Config
	// Site is the site slug requests are submitted for.
	Site string
	// SiteConfig is the site's gates and Ironic routing, snapshotted into
	// every request at submission.
	SiteConfig enrollment.SiteConfig
	// PlatformClassReady is the site's platform_class_activity_ready gate.
	PlatformClassReady bool

	// NetBox is the NetBox adapter; it also lists device names.
	NetBox *netbox.Client
	// Vault is the file vault; nil when the config names none.
	Vault *vault.File
	// BMCConnector opens Redfish connections to BMCs (TLS per BMC and
	// endpoints from the bmc section). The BMC phase and the Ironic link
	// guard share it; Close releases its connections.
	BMCConnector bmc.Connector
	// Secrets is the process's set of secret values (Options.Secrets).
	Secrets *hostforge.Secrets
	// Enrollment is the enrollment's step set on these systems: every phase
	// whose gate is on, with the link guard wired to the BMCs. nil with
	// Options.SubmitOnly.
	Enrollment *enrollment.Executor

	// FleetManager is the fleet inventory service's per-device record (the
	// platform-class phase records platform_class in it); nil without the
	// ledger: section, and the platform-class gate is then refused.
	FleetManager enrollment.FleetManager
	// Proofs is the fleet manager's completion-proof store; nil without the
	// ledger: section. With it, a submitter snapshots each device's identity
	// and its run settles proof.
	Proofs enrollment.ProofStore
	// Ledger is the fleet manager's ledger of the ledger: section, which
	// FleetManager and Proofs are; nil without the section (see ledger.go).
	Ledger *Ledger
	// Projector projects every Ironic instance's nodes into the ledger;
	// nil without a ledger or without Ironic instances.
	Projector *enrollment.Projector
	// Extensions dispatches extension events (serverRegistered after a
	// successful enrollment); nil without an extensions: section.
	Extensions *extensions.Dispatcher
	// DeployWatcher is the Ironic source of serverInstanceUpdate, the
	// Projector's observer; nil without extensions or a projector. It
	// submits nothing until a long-lived process gives it a Submitter.
	DeployWatcher *extensions.DeployWatcher

	// Firmware is the managed-host firmware update's systems; nil without
	// the config's firmware: section.
	Firmware *FirmwareSystems

	Log     *slog.Logger
	closers []func() error
}

// Close releases what Open acquired. It is safe to call more than once.
func (s *Systems) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	s.closers = nil
	return errors.Join(errs...)
}

// OnClose registers f to run when the systems close (a store a later
// section opens, say).
func (s *Systems) OnClose(f func() error) { s.closers = append(s.closers, f) }

// Open connects the systems cfg names. Nothing is written anywhere: NetBox
// and the BMCs are not contacted (their adapters connect per call), each
// Ironic instance is asked for its API versions so a wrong endpoint fails
// here, and the vault file and the DHCP phase's vault item are read and
// checked. A gate turned on for a phase this build cannot wire is refused
// before anything runs. Errors are *hostforge.Failure values: CONFIG_INVALID
// for what the config names, the adapter's own code otherwise.
func Open(ctx context.Context, cfg *Config, o Options) (_ *Systems, err error) {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	secrets := o.Secrets.OrNew()
	registerConfigSecrets(cfg, secrets)
	log = slog.New(secrets.Handler(log.Handler()))
	s := &Systems{Config: cfg, Site: cfg.Site, SiteConfig: cfg.SiteConfig(), PlatformClassReady: cfg.Gates.PlatformClassActivityReady, Log: log, Secrets: secrets}
	defer func() {
		if err != nil {
			_ = s.Close() // what a later part failed after an earlier one opened
		}
	}()

	nb, err := openNetBox(cfg, getenv, log, secrets)
	if err != nil {
		return nil, err
	}
	s.NetBox = nb
	g := cfg.Gates
	// The fleet manager and its proof store: the ledger: section (ledger.go).
	if err := openLedger(ctx, cfg, s, log); err != nil {
		return nil, err
	}
	if o.SubmitOnly {
		return s, nil
	}
	exec := &enrollment.Executor{NetBox: nb, Log: log, Secrets: secrets}
	if cfg.Vault != nil {
		v, err := vault.Open(cfg.Vault.Path)
		if err != nil {
			return nil, cfg.invalid("vault.path", "%v", err)
		}
		v.Secrets = secrets
		s.Vault, exec.Vault = v, v
	}
	if g.ConfigureDHCP {
		if exec.DHCP, err = openDHCP(ctx, cfg, s.Vault, log, secrets); err != nil {
			return nil, err
		}
	}
	if g.ConfigureBMC || g.IronicEnrol {
		conn, err := openBMCConnector(cfg, log, secrets)
		if err != nil {
			return nil, err
		}
		s.BMCConnector = conn
		s.OnClose(conn.Close)
		if s.Vault == nil {
			return nil, cfg.invalid("vault", "missing: the BMC and Ironic phases read credentials from the vault")
		}
	}
	if g.ConfigureBMC {
		exec.BMC = &bmc.Configurator{Connector: s.BMCConnector, Vault: s.Vault, Clock: clock.Real{}, Log: log, Secrets: secrets}
	}
	if g.IronicEnrol {
		if exec.Ironic, err = openIronic(ctx, cfg, s, o.IronicConnectTimeout, log); err != nil {
			return nil, err
		}
	}
	s.Enrollment = exec
	// A gate turned on for a phase without an adapter is refused here,
	// before anything runs, rather than failing every host with
	// NOT_IMPLEMENTED.
	for _, gate := range []struct {
		on    bool
		key   string
		wired bool
		what  string
	}{
		{g.ConfigureDHCP, "gates.enrollment_configure_dhcp", exec.DHCP != nil, "DHCP-over-SSH adapter"},
		{g.ConfigureBMC, "gates.enrollment_configure_bmc", exec.BMC != nil, "Redfish BMC adapter"},
		{g.IronicEnrol, "gates.enrollment_ironic_enrol", len(exec.Ironic) > 0, "Ironic API adapter"},
	} {
		if gate.on && !gate.wired {
			return nil, cfg.invalid(gate.key, "is on, but this build of hostforge has no %s to wire; turn the gate off", gate.what)
		}
	}
	exec.FleetManager = s.FleetManager
	if err := openExtensions(ctx, cfg, s, log); err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := openFirmware(ctx, cfg, s, log); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// openNetBox builds the NetBox adapter with the token the config names.
func openNetBox(cfg *Config, getenv func(string) string, log *slog.Logger, secrets *hostforge.Secrets) (*netbox.Client, error) {
	token, err := netBoxToken(cfg, getenv)
	if err != nil {
		return nil, err
	}
	secrets.Add(token)
	nbc := netbox.Config{URL: cfg.NetBox.URL, Token: token, InsecureSkipVerify: cfg.NetBox.InsecureSkipVerify, Log: log, Secrets: secrets}
	if cfg.NetBox.CAFile != "" {
		if nbc.CACertPEM, err = os.ReadFile(cfg.NetBox.CAFile); err != nil {
			return nil, cfg.invalid("netbox.ca_file", "%v", err)
		}
	}
	if cfg.NetBox.InsecureSkipVerify {
		log.Warn("NetBox TLS verification is off by the config file's explicit opt-in (netbox.insecure_skip_verify)", "phase", "wiring", "url", cfg.NetBox.URL)
	}
	nb, err := netbox.New(nbc)
	if err != nil {
		return nil, ConfigInvalid.Wrap(err, "netbox")
	}
	return nb, nil
}

// netBoxToken reads the token from the file or environment variable the
// config names (EnvNetBoxToken when it names neither). The value is never
// logged nor put in an error.
func netBoxToken(cfg *Config, getenv func(string) string) (string, error) {
	if f := cfg.NetBox.TokenFile; f != "" {
		s, err := vault.ReadSecretFile(f)
		if err != nil {
			return "", cfg.invalid("netbox.token_file", "%v", err)
		}
		return s, nil
	}
	env := cfg.NetBox.TokenEnv
	if env == "" {
		env = EnvNetBoxToken
	}
	s := strings.TrimSpace(getenv(env))
	if s == "" {
		return "", cfg.invalid("netbox.token_env", "the environment variable %s is unset or empty", env)
	}
	return s, nil
}

// openDHCP connects phase 1: the DHCP phase over the SSH adapter. Nothing
// is dialled here (the adapter connects per host), but the vault item is
// checked, so a missing key or known_hosts fails once, before any device is
// touched, rather than once per host.
func openDHCP(ctx context.Context, cfg *Config, v *vault.File, log *slog.Logger, secrets *hostforge.Secrets) (enrollment.DHCPPhase, error) {
	if v == nil {
		return nil, cfg.invalid("vault", "missing: the DHCP phase reads its SSH key and known_hosts from the vault")
	}
	addr, err := cfg.DHCP.Addr()
	if err != nil {
		return nil, cfg.invalid("dhcp.host", "%v", err)
	}
	item, err := v.Item(ctx, ssh.VaultItem)
	if err != nil {
		if errors.Is(err, hostforge.ErrNotFound) {
			return nil, ssh.CredentialsInvalid.New("the vault file %s (vault.path) has no item %s: the DHCP phase logs in with its %s and %s fields", v.Path(), ssh.VaultItem, ssh.FieldPrivateKey, ssh.FieldKnownHosts)
		}
		return nil, cfg.invalid("vault.path", "%v", err)
	}
	for _, f := range []string{ssh.FieldPrivateKey, ssh.FieldKnownHosts} {
		if strings.TrimSpace(item[f]) == "" {
			return nil, ssh.CredentialsInvalid.New("the vault item %s in %s has no %s field", ssh.VaultItem, v.Path(), f)
		}
	}
	if cfg.DHCP.User == "" && strings.TrimSpace(item[ssh.FieldUser]) == "" {
		return nil, cfg.invalid("dhcp.user", "missing: the DHCP server's login user (or the %s field of the vault item %s)", ssh.FieldUser, ssh.VaultItem)
	}
	t := cfg.DHCP.Timeouts
	dialer, err := ssh.New(ssh.Config{
		Addr:            addr,
		User:            cfg.DHCP.User,
		Vault:           v,
		ConnectTimeout:  t.Connect.D(),
		LoginTimeout:    t.Login.D(),
		CommandTimeout:  t.Command.D(),
		TransferTimeout: t.Transfer.D(),
		Log:             log,
		Secrets:         secrets,
	})
	if err != nil {
		return nil, cfg.invalid("dhcp", "%v", err)
	}
	phase := dhcp.New(dialer, cfg.DHCP.Server(), log)
	log.Debug("DHCP phase wired", "phase", "wiring", "addr", addr, "server", phase.Config().String())
	return phase, nil
}

// EndpointConnector reaches some BMCs elsewhere than their out-of-band
// address: the BMC phase and the Ironic phases know a BMC by the address
// NetBox records, and Endpoints maps it to the host:port that reaches it
// (a jump host's forwarded port, a lab's emulator). Other addresses are
// connected as they are. Open gives bmc.endpoints to the Redfish connector
// itself (redfish.Connector.Endpoints), which chooses TLS by the BMC's own
// address; EndpointConnector wraps any other bmc.Connector.
type EndpointConnector struct {
	Connector bmc.Connector
	Endpoints map[string]string
}

// Connect connects to the address's endpoint, or to the address itself.
func (e *EndpointConnector) Connect(ctx context.Context, address string, cred bmc.Credential) (bmc.Client, error) {
	if ep, ok := e.Endpoints[address]; ok {
		address = ep
	}
	return e.Connector.Connect(ctx, address, cred)
}

// openIronic connects one Ironic API per instance (New negotiates the API
// microversion, so a wrong endpoint fails before any device is touched) and
// builds its phases: the vault's per-host credentials, the inspection
// verifier, and the frontend-link guard reading the BMC over Redfish with
// the per-host admin credential the node spec names.
func openIronic(ctx context.Context, cfg *Config, s *Systems, timeout time.Duration, log *slog.Logger) (map[string]enrollment.IronicPhases, error) {
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	links := &bmc.LinkReader{Connector: s.BMCConnector, Vault: s.Vault, Secrets: s.Secrets}
	out := map[string]enrollment.IronicPhases{}
	for i, ic := range cfg.Ironic {
		at := fmt.Sprintf("ironic[%d]", i)
		icfg, err := ironicClientConfig(cfg, i, log)
		if err != nil {
			return nil, err
		}
		icfg.Secrets = s.Secrets
		if ic.InsecureSkipVerify {
			log.Warn("Ironic TLS verification is off by the config file's explicit opt-in", "phase", "wiring", "instance", ic.Name, "url", ic.URL)
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		client, err := ironicapi.New(cctx, icfg)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, hostforge.Cancelled.Wrap(ctx.Err(), "connecting to %s (%s)", at, ic.Name)
			}
			// A bad endpoint or a CA the API does not match is the config's
			// to fix; an API that does not answer is Ironic's.
			specs := hostforge.SystemSpecs{Unavailable: ironic.Unavailable, Unauthorized: ironic.Unauthorized, NotFound: ConfigInvalid, Invalid: ConfigInvalid, Conflict: ironic.Rejected}
			err = specs.Classify(err, "wiring", "%s (%s, %s)", at, ic.Name, ic.URL)
			if _, ok := hostforge.AsFailure(err); !ok {
				err = ironic.Unavailable.At("wiring").Wrap(err, "%s (%s, %s)", at, ic.Name, ic.URL)
			}
			return nil, err
		}
		ph := &ironic.Phases{
			Client:      client,
			Credentials: ironic.VaultCredentials{Vault: s.Vault},
			Links:       links,
			Verifier:    verify.Verifier{},
			Clock:       clock.Real{},
			Log:         log,
			Timing:      ic.Timing.Phases(),
		}
		if ic.LearnedPace == nil || *ic.LearnedPace {
			ph.Pace = ironic.NewPace() // one per instance, for the worker's life
		}
		out[ic.Name] = ph
	}
	return out, nil
}

// ironicClientConfig is the Ironic API client's config for cfg.Ironic[i]:
// its endpoint and TLS (ca_file read here; CONFIG_INVALID when it does not
// read).
func ironicClientConfig(cfg *Config, i int, log *slog.Logger) (ironicapi.Config, error) {
	ic := cfg.Ironic[i]
	icfg := ironicapi.Config{Endpoint: ic.URL, InsecureSkipVerify: ic.InsecureSkipVerify, Log: log}
	if ic.CAFile != "" {
		pem, err := os.ReadFile(ic.CAFile)
		if err != nil {
			return icfg, cfg.invalid(fmt.Sprintf("ironic[%d].ca_file", i), "%v", err)
		}
		icfg.CACertPEM = pem
	}
	return icfg, nil
}
