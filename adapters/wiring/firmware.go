package wiring

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/artifact"
	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/adapters/redfish"
	"github.com/hostforge/hostforge/adapters/scout"
	"github.com/hostforge/hostforge/adapters/script"
	"github.com/hostforge/hostforge/adapters/vault"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/ironic"
)

// FirmwareHelp documents the firmware: section; ConfigHelp includes it.
const FirmwareHelp = `Managed-host firmware updates (the firmware: section; optional). The
managed hosts are the nodes of every Ironic instance above (available is
Ready, active with an instance is Assigned); the update health report is
Ironic maintenance with the reason "host-fw-update: ...". A host's BMC is its
node's driver_info redfish_address (bmc.endpoints and bmc.ca_file apply), its
credential the vault item bmc-admin-<machine>.

  firmware:
    catalog: [/etc/hostforge/firmware.toml, /opt/hostforge/firmware]  # files or
                                       # firmware directories, merged in order
    scout_scripts: /opt/hostforge/scout-firmware-scripts   # optional: packaged
                                       # <vendor>/<model>/<component>/upgrade.sh
    artifact_cache: /var/cache/hostforge/firmware   # downloads of URL artifacts
    script_timeout: 1h                 # an entry's local script (at most 5h)
    explore_interval: 30m              # re-read each host's inventory this often
    settings:                          # NICo's firmware_global and machine_updater
      autoupdate: true
      instance_updates_manual_tagging: false
      host_disable_autoupdate: []      # legacy: machine IDs never selected
      max_concurrent_machine_updates_absolute: 4
      max_concurrent_machine_updates_percent: 10   # optional
      instance_autoreboot_period: {start: 2026-07-01T02:00:00Z, end: 2026-07-01T04:00:00Z}
      requires_manual_upgrade: false
      max_uploads: 4                   # uploads in flight, site-wide
      host_firmware_upgrade_retry_interval: 60m
      max_retries: 5
      machine_update_run_interval: 300s
      # timings (defaults in brackets): new_firmware_wait [30m],
      # max_reset_retries [5], no_reset_retries, initial_reset_wait [20m],
      # hgx_bmc_gpu_reboot_delay [30s], task_poll [30s], task_timeout [2h],
      # task_gone_grace [15m], inventory_poll [2m], recheck [5m],
      # max_transient_errors [10], max_upload_retries [5], upload_lease [2h]
    scout:                             # the on-host agent's server (hostforge worker)
      listen: 0.0.0.0:8643
      cert_file: /etc/hostforge/scout.crt   # TLS is required
      key_file: /etc/hostforge/scout.key
      token_file: /etc/hostforge/scout.token   # optional bearer token (mode 0600)

The firmware store (requests, update records, results, policies, windows,
upload slots) lives in the state database the ledger: section names, beside
the ledger: the section is required with firmware:. On PostgreSQL, every
worker shares it: one update manager pass at a time (an advisory lock), the
upload slots counted across workers.

Run 'hostforge worker' to run the update manager's pass, the update
workflows, the agent server and (with --metrics-listen) /metrics; the
'hostforge firmware' commands read and change the same store.`

// FirmwareConfig is the firmware: section.
type FirmwareConfig struct {
	Catalog       []string            `yaml:"catalog"`
	ScoutScripts  string              `yaml:"scout_scripts"`
	ArtifactCache string              `yaml:"artifact_cache"`
	ScriptTimeout enrollment.Duration `yaml:"script_timeout"`
	// ExploreInterval is how old a host's firmware inventory reading may
	// get before the worker reads it again (default 30m).
	ExploreInterval enrollment.Duration `yaml:"explore_interval"`
	Settings        FirmwareSettings    `yaml:"settings"`
	Scout           *ScoutConfig        `yaml:"scout"`
}

// ScoutConfig is the on-host agent's server.
type ScoutConfig struct {
	Listen    string `yaml:"listen"`
	CertFile  string `yaml:"cert_file"`
	KeyFile   string `yaml:"key_file"`
	TokenFile string `yaml:"token_file"`
}

// FirmwareSettings is firmware.Settings in the config file.
type FirmwareSettings struct {
	AutoUpdate                   bool                `yaml:"autoupdate"`
	InstanceUpdatesManualTagging bool                `yaml:"instance_updates_manual_tagging"`
	HostDisableAutoupdate        []string            `yaml:"host_disable_autoupdate"`
	MaxConcurrentAbsolute        *int                `yaml:"max_concurrent_machine_updates_absolute"`
	MaxConcurrentPercent         *int                `yaml:"max_concurrent_machine_updates_percent"`
	InstanceAutorebootPeriod     *PeriodConfig       `yaml:"instance_autoreboot_period"`
	RequiresManualUpgrade        bool                `yaml:"requires_manual_upgrade"`
	MaxUploads                   int                 `yaml:"max_uploads"`
	RetryInterval                enrollment.Duration `yaml:"host_firmware_upgrade_retry_interval"`
	MaxRetries                   int                 `yaml:"max_retries"`
	NewFirmwareWait              enrollment.Duration `yaml:"new_firmware_wait"`
	MaxResetRetries              int                 `yaml:"max_reset_retries"`
	NoResetRetries               bool                `yaml:"no_reset_retries"`
	InitialResetWait             enrollment.Duration `yaml:"initial_reset_wait"`
	HGXRebootDelay               enrollment.Duration `yaml:"hgx_bmc_gpu_reboot_delay"`
	TaskPoll                     enrollment.Duration `yaml:"task_poll"`
	TaskTimeout                  enrollment.Duration `yaml:"task_timeout"`
	TaskGoneGrace                enrollment.Duration `yaml:"task_gone_grace"`
	InventoryPoll                enrollment.Duration `yaml:"inventory_poll"`
	Recheck                      enrollment.Duration `yaml:"recheck"`
	MaxTransientErrors           int                 `yaml:"max_transient_errors"`
	MaxUploadRetries             int                 `yaml:"max_upload_retries"`
	UploadLease                  enrollment.Duration `yaml:"upload_lease"`
	RunInterval                  enrollment.Duration `yaml:"machine_update_run_interval"`
}

// PeriodConfig is a span of time (RFC 3339 instants).
type PeriodConfig struct {
	Start time.Time `yaml:"start"`
	End   time.Time `yaml:"end"`
}

// Settings maps the section onto firmware.Settings (defaults filled).
func (s FirmwareSettings) Settings() firmware.Settings {
	var period *firmware.Period
	if p := s.InstanceAutorebootPeriod; p != nil {
		period = &firmware.Period{Start: p.Start, End: p.End}
	}
	return firmware.Settings{
		AutoUpdate: s.AutoUpdate, InstanceUpdatesManualTagging: s.InstanceUpdatesManualTagging,
		HostDisableAutoupdate: s.HostDisableAutoupdate, MaxConcurrentAbsolute: s.MaxConcurrentAbsolute,
		MaxConcurrentPercent: s.MaxConcurrentPercent, InstanceAutorebootPeriod: period,
		RequiresManualUpgrade: s.RequiresManualUpgrade, MaxUploads: s.MaxUploads,
		RetryInterval: s.RetryInterval.D(), MaxRetries: s.MaxRetries, NewFirmwareWait: s.NewFirmwareWait.D(),
		MaxResetRetries: s.MaxResetRetries, NoResetRetries: s.NoResetRetries, InitialResetWait: s.InitialResetWait.D(),
		HGXRebootDelay: s.HGXRebootDelay.D(), TaskPoll: s.TaskPoll.D(), TaskTimeout: s.TaskTimeout.D(),
		TaskGoneGrace: s.TaskGoneGrace.D(), InventoryPoll: s.InventoryPoll.D(), Recheck: s.Recheck.D(),
		MaxTransientErrors: s.MaxTransientErrors, MaxUploadRetries: s.MaxUploadRetries, UploadLease: s.UploadLease.D(),
		RunInterval: s.RunInterval.D(),
	}.WithDefaults()
}

// validateFirmware checks the firmware section while the config is read
// (nothing is opened).
func (c *Config) validateFirmware() error {
	f := c.Firmware
	if f == nil {
		return nil
	}
	if len(c.Ironic) == 0 {
		return c.keyError("firmware", "needs the ironic: section: the managed hosts are Ironic's nodes")
	}
	if c.Vault == nil {
		return c.keyError("firmware", "needs the vault: section: BMC credentials are the vault items bmc-admin-<machine>")
	}
	if len(f.Catalog) == 0 {
		return c.keyError("firmware.catalog", "missing: the host firmware catalog's files or firmware directories")
	}
	if f.ExploreInterval < 0 {
		return c.keyError("firmware.explore_interval", "negative duration")
	}
	if f.ScriptTimeout < 0 || f.ScriptTimeout.D() > firmware.MaxScriptTimeout {
		return c.keyError("firmware.script_timeout", "%s: want at most %s", f.ScriptTimeout.D(), firmware.MaxScriptTimeout)
	}
	s := f.Settings
	for key, v := range map[string]*int{"max_concurrent_machine_updates_absolute": s.MaxConcurrentAbsolute, "max_concurrent_machine_updates_percent": s.MaxConcurrentPercent} {
		if v != nil && *v < 0 {
			return c.keyError("firmware.settings."+key, "%d: want 0 or more", *v)
		}
	}
	if s.MaxConcurrentPercent != nil && *s.MaxConcurrentPercent > 100 {
		return c.keyError("firmware.settings.max_concurrent_machine_updates_percent", "%d: want at most 100", *s.MaxConcurrentPercent)
	}
	if p := s.InstanceAutorebootPeriod; p != nil && !p.End.After(p.Start) {
		return c.keyError("firmware.settings.instance_autoreboot_period", "ends before it starts")
	}
	for key, v := range map[string]int{"max_uploads": s.MaxUploads, "max_retries": s.MaxRetries, "max_reset_retries": s.MaxResetRetries,
		"max_transient_errors": s.MaxTransientErrors, "max_upload_retries": s.MaxUploadRetries} {
		if v < 0 {
			return c.keyError("firmware.settings."+key, "%d: want 0 (the default) or more", v)
		}
	}
	if sc := f.Scout; sc != nil {
		switch {
		case sc.Listen == "":
			return c.keyError("firmware.scout.listen", "missing: host:port the agent server listens on")
		case sc.CertFile == "" || sc.KeyFile == "":
			return c.keyError("firmware.scout.cert_file", "the agent server serves TLS only: set cert_file and key_file")
		}
	}
	if c.Ledger == nil {
		return c.keyError("firmware", "needs the ledger: section: the firmware store lives in its state database")
	}
	return nil
}

// FirmwareSystems are the firmware update's systems: the store, the
// managed hosts, the BMCs, the routes and the catalog.
type FirmwareSystems struct {
	Store    firmware.Store
	Hosts    *ironicapi.FirmwareHosts
	Catalog  *firmware.Catalog
	Settings firmware.Settings
	// Executor runs the update workflow's steps (Metrics unset: the
	// worker sets it).
	Executor *firmware.Executor
	// Scout is the agent server; nil without firmware.scout.
	Scout *scout.Server
	// ScoutTLS is the agent server's certificate.
	ScoutTLS *tls.Config
	// ScoutListen is where the agent server listens.
	ScoutListen string
	// Explorer keeps the hosts' inventory readings fresh.
	Explorer *firmware.Explorer

	closers []func() error
}

// Close closes the store.
func (f *FirmwareSystems) Close() error {
	var errs []error
	for i := len(f.closers) - 1; i >= 0; i-- {
		errs = append(errs, f.closers[i]())
	}
	f.closers = nil
	return errors.Join(errs...)
}

// OpenFirmware wires the firmware section alone: what the 'hostforge
// firmware' commands and the worker use. v may be nil (the vault is then
// opened from the config). Errors: CONFIG_INVALID for what the config
// names, STATE_STORE_UNAVAILABLE for a database that does not answer.
// secrets is the process's set of secret values (nil: a new one): the
// vault registers what it hands out, and the Redfish client scrubs what
// BMCs echo.
func OpenFirmware(ctx context.Context, cfg *Config, v *vault.File, log *slog.Logger, secrets *hostforge.Secrets) (*FirmwareSystems, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	fc := cfg.Firmware
	if fc == nil {
		return nil, cfg.invalid("firmware", "missing: this command needs the firmware: section")
	}
	cat, err := firmware.LoadCatalog(fc.Catalog...)
	if err != nil {
		return nil, cfg.invalid("firmware.catalog", "%v", err)
	}
	secrets = secrets.OrNew()
	if v == nil {
		if v, err = vault.Open(cfg.Vault.Path); err != nil {
			return nil, cfg.invalid("vault.path", "%v", err)
		}
		v.Secrets = secrets
	}
	fs := &FirmwareSystems{Catalog: cat, Settings: fc.Settings.Settings()}
	store, closeStore, err := openFirmwareStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	fs.Store = store
	fs.closers = append(fs.closers, closeStore)
	hosts := &ironicapi.FirmwareHosts{}
	for i, ic := range cfg.Ironic {
		icfg, err := ironicClientConfig(cfg, i, log)
		if err != nil {
			_ = fs.Close()
			return nil, err
		}
		hosts.Instances = append(hosts.Instances, ironicapi.Instance{Name: ic.Name, Source: &lazyNodes{cfg: icfg}})
	}
	fs.Hosts = hosts
	conn, err := openBMCConnector(cfg, log, secrets)
	if err != nil {
		_ = fs.Close()
		return nil, err
	}
	locate := bmcLocator(cfg, hosts, v)
	exec := &firmware.Executor{Store: store, Hosts: hosts, Catalog: cat, Settings: fs.Settings, Clock: clock.Real{},
		BMC:           &redfish.Firmware{Connector: conn, Locate: locate, Log: log},
		Scripts:       &script.Runner{Locate: locate, Log: log},
		ScriptTimeout: fc.ScriptTimeout.D(),
		Artifacts:     &artifact.Cache{Dir: fc.ArtifactCache, Log: log},
	}
	if fc.ScoutScripts != "" {
		exec.ScoutScripts = firmware.ScoutDir{Dir: fc.ScoutScripts}
		exec.Scout = firmware.StoredScout{Store: store}
	}
	fs.Executor = exec
	fs.Explorer = &firmware.Explorer{Store: store, Hosts: hosts, BMC: exec.BMC, Catalog: cat, Clock: clock.Real{}, MaxAge: fc.ExploreInterval.D()}
	if sc := fc.Scout; sc != nil {
		cert, err := tls.LoadX509KeyPair(sc.CertFile, sc.KeyFile)
		if err != nil {
			_ = fs.Close()
			return nil, cfg.invalid("firmware.scout.cert_file", "%v", err)
		}
		fs.ScoutTLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
		fs.ScoutListen = sc.Listen
		srv := &scout.Server{Store: store, Clock: clock.Real{}, Log: log}
		if sc.TokenFile != "" {
			if srv.Token, err = vault.ReadSecretFile(sc.TokenFile); err != nil {
				_ = fs.Close()
				return nil, cfg.invalid("firmware.scout.token_file", "%v", err)
			}
		}
		fs.Scout = srv
	}
	return fs, nil
}

// openFirmware is Open's part for the firmware section.
func openFirmware(ctx context.Context, cfg *Config, s *Systems, log *slog.Logger) error {
	if cfg.Firmware == nil {
		return nil
	}
	fs, err := OpenFirmware(ctx, cfg, s.Vault, log, s.Secrets)
	if err != nil {
		return err
	}
	s.Firmware = fs
	s.OnClose(fs.Close)
	return nil
}

// bmcLocator finds a machine's BMC: its node's driver_info address (an
// endpoint of bmc.endpoints instead, where one is configured) and the
// per-host admin credential of the vault, as the enrollment's Ironic
// phases use it.
func bmcLocator(cfg *Config, hosts *ironicapi.FirmwareHosts, v *vault.File) func(ctx context.Context, machine string) (string, bmc.Credential, error) {
	endpoints := cfg.BMC.EndpointMap()
	creds := ironic.VaultCredentials{Vault: v}
	return func(ctx context.Context, machine string) (string, bmc.Credential, error) {
		addr, err := hosts.BMCAddress(ctx, machine)
		if err != nil {
			return "", bmc.Credential{}, firmware.BMCErrors.Classify(err, "firmware_update", "locating the BMC of %s", machine)
		}
		if ep, ok := endpoints[addr]; ok {
			addr = ep
		} else if h := strings.Split(addr, ":")[0]; endpoints[h] != "" {
			addr = endpoints[h]
		}
		c, err := creds.BMCCredential(ctx, ironic.NodeSpec{Name: machine, CredentialItem: enrollment.AdminItem(machine)})
		if err != nil {
			return "", bmc.Credential{}, err
		}
		return addr, bmc.Credential{Username: c.Username, Password: c.Password}, nil
	}
}

// lazyNodes is an Ironic API client that connects on first use, so an
// instance that is down fails only the calls that need it.
type lazyNodes struct {
	cfg ironicapi.Config
	mu  sync.Mutex
	c   *ironicapi.Client
}

var _ ironicapi.NodeSource = (*lazyNodes)(nil)

func (l *lazyNodes) client(ctx context.Context) (*ironicapi.Client, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c != nil {
		return l.c, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	c, err := ironicapi.New(cctx, l.cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to Ironic at %s: %v: %w", l.cfg.Endpoint, err, hostforge.ErrUnavailable)
	}
	l.c = c
	return c, nil
}

func (l *lazyNodes) ListNodes(ctx context.Context) ([]ironic.Node, error) {
	c, err := l.client(ctx)
	if err != nil {
		return nil, err
	}
	return c.ListNodes(ctx)
}

func (l *lazyNodes) GetNode(ctx context.Context, ident string, fields ...string) (ironic.Node, error) {
	c, err := l.client(ctx)
	if err != nil {
		return ironic.Node{}, err
	}
	return c.GetNode(ctx, ident, fields...)
}

func (l *lazyNodes) SetMaintenance(ctx context.Context, ident string, on bool, reason string) error {
	c, err := l.client(ctx)
	if err != nil {
		return err
	}
	return c.SetMaintenance(ctx, ident, on, reason)
}
