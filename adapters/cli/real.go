package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hostforge/hostforge"
	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/adapters/netbox"
	"github.com/hostforge/hostforge/adapters/redfish"
	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/verify"
)

// EnvNetBoxToken is the default environment variable holding the NetBox token.
const EnvNetBoxToken = "HOSTFORGE_NETBOX_TOKEN"

// realSystems connects to the systems a config file names.
func (a *app) realSystems(cfg *Config, log *slog.Logger) (*systems, error) {
	token, err := a.secret(cfg, "netbox", cfg.NetBox.TokenEnv, cfg.NetBox.TokenFile, EnvNetBoxToken)
	if err != nil {
		return nil, err
	}
	nbc := netbox.Config{URL: cfg.NetBox.URL, Token: token, InsecureSkipVerify: cfg.NetBox.InsecureSkipVerify, Log: log}
	if cfg.NetBox.CAFile != "" {
		if nbc.CACertPEM, err = os.ReadFile(cfg.NetBox.CAFile); err != nil {
			return nil, usageErr(ConfigInvalid.New("%s", cfg.keyError("netbox.ca_file", "%v", err)))
		}
	}
	if cfg.NetBox.InsecureSkipVerify {
		log.Warn("NetBox TLS verification is off by the config file's explicit opt-in (netbox.insecure_skip_verify)", "phase", "cli", "url", cfg.NetBox.URL)
	}
	nb, err := netbox.New(nbc)
	if err != nil {
		return nil, usageErr(ConfigInvalid.Wrap(err, "netbox"))
	}
	exec := &enrollment.Executor{NetBox: nb, Log: log}
	if cfg.Vault != nil {
		v, err := loadFileVault(cfg.Vault.Path)
		if err != nil {
			return nil, usageErr(ConfigInvalid.New("%s", cfg.keyError("vault.path", "%v", err)))
		}
		exec.Vault = v
	}
	if cfg.Gates.ConfigureDHCP {
		if err := wireDHCP(cfg, exec, log); err != nil {
			return nil, err
		}
	}
	if cfg.Gates.ConfigureBMC || cfg.Gates.IronicEnrol {
		if err := wireBMCAndIronic(cfg, exec, log); err != nil {
			return nil, err
		}
	}
	lw, closeLedger, err := a.wireLedger(cfg, exec, log)
	if err != nil {
		return nil, err
	}
	// The phases whose adapters this build wires. A gate turned on for a
	// phase without one is refused here, before anything runs, rather than
	// failing every host with NOT_IMPLEMENTED.
	for _, g := range []struct {
		on    bool
		key   string
		wired bool
		what  string
	}{
		{cfg.Gates.ConfigureDHCP, "gates.enrollment_configure_dhcp", exec.DHCP != nil, "a DHCP-over-SSH adapter"},
		{cfg.Gates.ConfigureBMC, "gates.enrollment_configure_bmc", exec.BMC != nil, "a Redfish BMC adapter"},
		{cfg.Gates.IronicEnrol, "gates.enrollment_ironic_enrol", len(exec.Ironic) > 0, "an Ironic API adapter"},
		{cfg.Gates.PlatformClassActivityReady, "gates.platform_class_activity_ready", exec.FleetManager != nil, "a fleet manager (the ledger: section)"},
	} {
		if g.on && !g.wired {
			closeLedger()
			return nil, usageErr(ConfigInvalid.New("%s", cfg.keyError(g.key, "is on, but it needs %s; configure it or turn the gate off for this run", g.what)))
		}
	}
	return &systems{
		site:       cfg.Site,
		netbox:     nb,
		lister:     nb,
		fleet:      exec.FleetManager,
		exec:       exec,
		clock:      clock.Real{},
		siteConfig: cfg.SiteConfig(),
		pcReady:    cfg.Gates.PlatformClassActivityReady,
		log:        log,
		ledger:     lw,
		closers:    []func(){closeLedger},
	}, nil
}

// wireDHCP connects phase 1: the DHCP phase over the SSH adapter. Nothing
// is dialled here (the adapter connects per host), but the vault item is
// checked, so a missing key or known_hosts fails once, before any device is
// touched, rather than once per host.
func wireDHCP(cfg *Config, exec *enrollment.Executor, log *slog.Logger) error {
	vault, ok := exec.Vault.(*fileVault)
	if !ok {
		return usageErr(ConfigInvalid.New("%s", cfg.keyError("vault", "missing: the DHCP phase reads its SSH key and known_hosts from the vault")))
	}
	addr, err := cfg.DHCP.Addr()
	if err != nil {
		return usageErr(ConfigInvalid.New("%s", cfg.keyError("dhcp.host", "%v", err)))
	}
	item, err := vault.Item(context.Background(), ssh.VaultItem)
	if err != nil {
		return ssh.CredentialsInvalid.New("the vault file %s (vault.path) has no item %s: the DHCP phase logs in with its %s and %s fields", vault.path, ssh.VaultItem, ssh.FieldPrivateKey, ssh.FieldKnownHosts)
	}
	for _, f := range []string{ssh.FieldPrivateKey, ssh.FieldKnownHosts} {
		if strings.TrimSpace(item[f]) == "" {
			return ssh.CredentialsInvalid.New("the vault item %s in %s has no %s field", ssh.VaultItem, vault.path, f)
		}
	}
	if cfg.DHCP.User == "" && strings.TrimSpace(item[ssh.FieldUser]) == "" {
		return usageErr(ConfigInvalid.New("%s", cfg.keyError("dhcp.user", "missing: the DHCP server's login user (or the %s field of the vault item %s)", ssh.FieldUser, ssh.VaultItem)))
	}
	t := cfg.DHCP.Timeouts
	dialer, err := ssh.New(ssh.Config{
		Addr:            addr,
		User:            cfg.DHCP.User,
		Vault:           vault,
		ConnectTimeout:  t.Connect.D(),
		LoginTimeout:    t.Login.D(),
		CommandTimeout:  t.Command.D(),
		TransferTimeout: t.Transfer.D(),
		Log:             log,
	})
	if err != nil {
		return usageErr(ConfigInvalid.New("%s", cfg.keyError("dhcp", "%v", err)))
	}
	phase := dhcp.New(dialer, cfg.DHCP.Server(), log)
	log.Debug("DHCP phase wired", "phase", "cli", "addr", addr, "server", phase.Config().String())
	exec.DHCP = phase
	return nil
}

// wireBMCAndIronic connects phase 2 (Redfish) and phases 4-7 (one Ironic
// API per instance). Ironic is contacted here: New negotiates the API
// microversion, so a wrong endpoint fails before any device is touched.
func wireBMCAndIronic(cfg *Config, exec *enrollment.Executor, log *slog.Logger) error {
	vault, ok := exec.Vault.(*fileVault)
	if !ok {
		return usageErr(ConfigInvalid.New("%s", cfg.keyError("vault", "missing: the BMC and Ironic phases read credentials from the vault")))
	}
	var bmcTLS redfish.TLS
	if cfg.BMC.CAFile != "" {
		pem, err := os.ReadFile(cfg.BMC.CAFile)
		if err != nil {
			return usageErr(ConfigInvalid.New("%s", cfg.keyError("bmc.ca_file", "%v", err)))
		}
		bmcTLS.CAPEM = pem
	}
	bmcTLS.InsecureSkipVerify = cfg.BMC.InsecureSkipVerify // explicit opt-in; the connector logs every such connection
	conn := &redfish.Connector{TLSFor: func(string) redfish.TLS { return bmcTLS }, Log: log}
	if cfg.Gates.ConfigureBMC {
		exec.BMC = &bmc.Configurator{Connector: conn, Vault: vault, Clock: clock.Real{}, Log: log}
	}
	if !cfg.Gates.IronicEnrol {
		return nil
	}
	exec.Ironic = map[string]enrollment.IronicPhases{}
	for i, ic := range cfg.Ironic {
		at := fmt.Sprintf("ironic[%d]", i)
		icfg := ironicapi.Config{Endpoint: ic.URL, InsecureSkipVerify: ic.InsecureSkipVerify, Log: log}
		if ic.CAFile != "" {
			pem, err := os.ReadFile(ic.CAFile)
			if err != nil {
				return usageErr(ConfigInvalid.New("%s", cfg.keyError(at+".ca_file", "%v", err)))
			}
			icfg.CACertPEM = pem
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		client, err := ironicapi.New(ctx, icfg)
		cancel()
		if err != nil {
			_, f, _ := hostforge.Classify(err)
			f.Message = fmt.Sprintf("%s (%s): %s", at, ic.Name, f.Message)
			return f
		}
		// Links is nil: the frontend-link guard needs the BMC credential by
		// BMC address, which this build does not resolve yet; ironic.Phases
		// logs that the guard is off and Ironic stays the source of truth.
		exec.Ironic[ic.Name] = &ironic.Phases{Verifier: verify.Verifier{}, Client: client, Credentials: ironic.VaultCredentials{Vault: vault}, Clock: clock.Real{}, Log: log}
	}
	return nil
}

// secret reads a secret from the environment variable or the file the
// config names (envDefault when it names neither). It never logs the value.
func (a *app) secret(cfg *Config, key, env, file, envDefault string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", usageErr(ConfigInvalid.New("%s", cfg.keyError(key+".token_file", "%v", err)))
		}
		s := strings.TrimSpace(string(b))
		if s == "" {
			return "", usageErr(ConfigInvalid.New("%s", cfg.keyError(key+".token_file", "the file %s is empty", file)))
		}
		return s, nil
	}
	if env == "" {
		env = envDefault
	}
	s := strings.TrimSpace(a.getenv(env))
	if s == "" {
		return "", usageErr(ConfigInvalid.New("%s", cfg.keyError(key+".token_env", "the environment variable %s is unset or empty", env)))
	}
	return s, nil
}

// fileVault is a Vault kept in a YAML file of items of named fields:
//
//	bmc-admin-cpu-r1-u10: {username: root, password: ...}
//	ipmi-exporter: {username: ipmi_exporter, password: ...}
//
// It is read once; the file must not be readable by group or others.
type fileVault struct {
	path  string
	mu    sync.Mutex
	items map[string]map[string]string
}

func loadFileVault(path string) (*fileVault, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("the vault file %s is readable by group or others (mode %s); chmod 600 it", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v := &fileVault{path: path, items: map[string]map[string]string{}}
	if err := yaml.Unmarshal(b, &v.items); err != nil {
		// yaml's message may quote file content: keep only its position.
		return nil, fmt.Errorf("the vault file %s is not a mapping of items to fields of strings", path)
	}
	return v, nil
}

// Item returns a copy of an item's fields.
func (v *fileVault) Item(ctx context.Context, name string) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	it, ok := v.items[name]
	if !ok {
		return nil, fmt.Errorf("vault file: item %q: %w", name, hostforge.ErrNotFound)
	}
	out := make(map[string]string, len(it))
	for k, val := range it {
		out[k] = val
	}
	return out, nil
}

// PutItem replaces an item's fields and rewrites the file atomically (a
// temporary file, mode 0600, renamed over it), so a crash leaves the old or
// the new file, never half of one. The BMC phase calls it during a password
// rotation.
func (v *fileVault) PutItem(ctx context.Context, name string, fields map[string]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	next := make(map[string]map[string]string, len(v.items)+1)
	for k, it := range v.items {
		next[k] = it
	}
	cp := make(map[string]string, len(fields))
	for k, val := range fields {
		cp[k] = val
	}
	next[name] = cp
	b, err := yaml.Marshal(next)
	if err != nil {
		return fmt.Errorf("vault file: encoding item %q: %w", name, hostforge.ErrInvalid)
	}
	tmp, err := os.CreateTemp(filepath.Dir(v.path), ".vault-*")
	if err != nil {
		return fmt.Errorf("vault file: %v: %w", err, hostforge.ErrUnavailable)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.Write(b)
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), v.path)
		}
		if err != nil {
			return fmt.Errorf("vault file: writing item %q: %v: %w", name, err, hostforge.ErrUnavailable)
		}
	} else {
		tmp.Close()
		return fmt.Errorf("vault file: %v: %w", err, hostforge.ErrUnavailable)
	}
	v.items = next
	return nil
}
