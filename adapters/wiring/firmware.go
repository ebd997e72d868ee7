package wiring

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/artifact"
	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/adapters/redfish"
	"github.com/hostforge/hostforge/adapters/scout"
	"github.com/hostforge/hostforge/adapters/script"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/vault"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/ironic"
)

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

	// ArtifactMaxBytes caps one artifact download (artifact.DefaultMaxBytes
	// when left out).
	ArtifactMaxBytes ByteSize `yaml:"artifact_max_bytes"`
}

// ScoutConfig is the on-host agent's server.
type ScoutConfig struct {
	Listen   string `yaml:"listen"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// SiteSecretItem is the vault item whose ScoutSecretField every
	// machine's token is derived from; required.
	SiteSecretItem string `yaml:"site_secret_item"`
	// TokenFile was a fleet-wide bearer token: it is refused with a
	// message naming its replacement, site_secret_item.
	TokenFile string `yaml:"token_file"`
}

// ScoutSecretField is the field of the site secret's vault item.
const ScoutSecretField = "secret"

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
	PowerDrainWait               enrollment.Duration `yaml:"power_drain_wait"`
	HistoryRetention             enrollment.Duration `yaml:"history_retention"`
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
		RunInterval: s.RunInterval.D(), PowerDrainWait: s.PowerDrainWait.D(), HistoryRetention: s.HistoryRetention.D(),
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
	if strings.TrimSpace(f.ScoutScripts) != "" && f.Scout == nil {
		return c.keyError("firmware.scout_scripts", "the packaged agent scripts need the agent's server: add the firmware.scout section (listen, "+
			"cert_file, key_file, site_secret_item), or remove scout_scripts; without the server every agent task would wait out its deadline")
	}
	if sc := f.Scout; sc != nil {
		switch {
		case sc.Listen == "":
			return c.keyError("firmware.scout.listen", "missing: host:port the agent server listens on")
		case sc.CertFile == "" || sc.KeyFile == "":
			return c.keyError("firmware.scout.cert_file", "the agent server serves TLS only: set cert_file and key_file")
		case sc.TokenFile != "":
			return c.keyError("firmware.scout.token_file", "no longer accepted: one token for the whole fleet lets any host speak for every machine; "+
				"set site_secret_item (a vault item) instead and give each host its own token with 'hostforge scout token --config F --machine ID'")
		case strings.TrimSpace(sc.SiteSecretItem) == "":
			return c.keyError("firmware.scout.site_secret_item", "missing: the vault item whose %s field every host's agent token is derived from; "+
				"the agent server authenticates every request as one machine", ScoutSecretField)
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
	Store firmware.Store
	Hosts *ironicapi.FirmwareHosts
	// Catalog is the catalog of firmware.catalog's files, re-read when
	// they change; CheckCatalog refuses an effective catalog the site
	// cannot use (URL artifacts without a cache).
	Catalog      *firmware.CatalogFiles
	CheckCatalog func(*firmware.Catalog) error
	Settings     firmware.Settings
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
	// ArtifactCache is where URL artifacts are downloaded: the config's
	// artifact_cache, else (ArtifactCacheDefault) DefaultArtifactCacheDir
	// beside the SQLite state database; "" when there is none.
	ArtifactCache        string
	ArtifactCacheDefault bool

	closers []func() error
}

// Cycle is the site's periodic firmware work on these systems (the update
// manager on the real clock, the explorer), publishing to m (nil: none),
// its stored pass figures naming holder.
func (f *FirmwareSystems) Cycle(m firmware.Metrics, log *slog.Logger, holder string) *firmware.Cycle {
	mgr := &firmware.Manager{Store: f.Store, Hosts: f.Hosts, Catalog: f.Catalog, Settings: f.Settings, Clock: clock.Real{}}
	return &firmware.Cycle{Manager: mgr, Explorer: f.Explorer, Metrics: m, Log: log, Holder: holder}
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
	cacheDir, cacheDefault := ArtifactCacheDir(cfg)
	check := func(c *firmware.Catalog) error { return checkDownloads(cfg, c, cacheDir) }
	settings := fc.Settings.Settings()
	cat, err := firmware.OpenCatalogFiles(fc.Catalog, firmware.CatalogFilesOptions{Check: check, Log: log, Every: min(settings.RunInterval, 30*time.Second)})
	if err != nil {
		if ConfigInvalid.Is(err) {
			return nil, err
		}
		return nil, cfg.invalid("firmware.catalog", "%v", err)
	}
	secrets = secrets.OrNew()
	if v == nil {
		if v, err = vault.Open(cfg.Vault.Path); err != nil {
			return nil, cfg.invalid("vault.path", "%v", err)
		}
		v.Secrets = secrets
	}
	fs := &FirmwareSystems{Catalog: cat, CheckCatalog: check, Settings: settings, ArtifactCache: cacheDir, ArtifactCacheDefault: cacheDefault}
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
		Artifacts:     &artifact.Cache{Dir: cacheDir, MaxBytes: int64(fc.ArtifactMaxBytes), Log: log},
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
		secret, err := ScoutSiteSecret(ctx, cfg, v, secrets)
		if err != nil {
			_ = fs.Close()
			return nil, err
		}
		fs.ScoutTLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
		fs.ScoutListen = sc.Listen
		fs.Scout = &scout.Server{Store: store, Clock: clock.Real{}, Log: log, SiteSecret: secret}
	}
	return fs, nil
}

// ScoutSiteSecret reads the agent server's site secret from the vault item
// firmware.scout.site_secret_item names and registers it with secrets (it
// is never logged). v may be nil: the vault is then opened from the
// config. A missing item or field, or a secret shorter than
// scout.MinSiteSecretLen characters, is CONFIG_INVALID naming the key.
func ScoutSiteSecret(ctx context.Context, cfg *Config, v *vault.File, secrets *hostforge.Secrets) ([]byte, error) {
	const key = "firmware.scout.site_secret_item"
	if cfg.Firmware == nil || cfg.Firmware.Scout == nil {
		return nil, cfg.invalid("firmware.scout", "missing: the agent server's section, with site_secret_item")
	}
	if cfg.Vault == nil {
		return nil, cfg.invalid("vault", "missing: the site secret of the agent server is a vault item")
	}
	name := cfg.Firmware.Scout.SiteSecretItem
	if v == nil {
		var err error
		if v, err = vault.Open(cfg.Vault.Path); err != nil {
			return nil, cfg.invalid("vault.path", "%v", err)
		}
		v.Secrets = secrets
	}
	item, err := v.Item(ctx, name)
	if errors.Is(err, hostforge.ErrNotFound) {
		return nil, cfg.invalid(key, "the vault %s has no item %q: add it with a %s field of at least %d random characters", v.Path(), name, ScoutSecretField, scout.MinSiteSecretLen)
	}
	if err != nil {
		return nil, cfg.invalid(key, "reading the vault item %q: %v", name, err)
	}
	secret := item[ScoutSecretField]
	secrets.Add(secret)
	if n := utf8.RuneCountInString(secret); n < scout.MinSiteSecretLen {
		return nil, cfg.invalid(key, "the vault item %q's %s field has %d characters; want at least %d random ones", name, ScoutSecretField, n, scout.MinSiteSecretLen)
	}
	return []byte(secret), nil
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

// DefaultArtifactCacheDir is the artifact cache's directory beside the
// SQLite state database when the config names none.
const DefaultArtifactCacheDir = "firmware-artifacts"

// ArtifactCacheDir is where URL artifacts are downloaded: firmware.
// artifact_cache, else DefaultArtifactCacheDir in the directory of the
// SQLite state database (isDefault); "" on a shared PostgreSQL database
// without artifact_cache (each worker needs a directory of its own).
func ArtifactCacheDir(cfg *Config) (dir string, isDefault bool) {
	if cfg.Firmware != nil && strings.TrimSpace(cfg.Firmware.ArtifactCache) != "" {
		return cfg.Firmware.ArtifactCache, false
	}
	if lc := cfg.Ledger; lc != nil && sqlstore.Driver(lc.Driver) == sqlstore.SQLite && strings.TrimSpace(lc.Path) != "" {
		return filepath.Join(filepath.Dir(lc.Path), DefaultArtifactCacheDir), true
	}
	return "", false
}

// checkDownloads refuses a catalog with URL artifacts when there is no
// artifact cache: every update of them would fail FIRMWARE_ARTIFACT_MISSING.
func checkDownloads(cfg *Config, cat *firmware.Catalog, cacheDir string) error {
	if cacheDir != "" {
		return nil
	}
	if urls := cat.Downloads(); len(urls) > 0 {
		more := ""
		if len(urls) > 1 {
			more = fmt.Sprintf(" and %d more", len(urls)-1)
		}
		return cfg.invalid("firmware.artifact_cache", "missing: the catalog downloads artifacts (%s%s) and there is no directory to cache them in; "+
			"set artifact_cache (a directory of this worker)", urls[0], more)
	}
	return nil
}
