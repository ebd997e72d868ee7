package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/netbox"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
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
		{cfg.Gates.PlatformClassActivityReady, "gates.platform_class_activity_ready", exec.FleetManager != nil, "a fleet manager adapter"},
	} {
		if g.on && !g.wired {
			return nil, usageErr(ConfigInvalid.New("%s", cfg.keyError(g.key, "is on, but this build of hostforge has %s wired into the CLI yet; turn the gate off for this run", "no "+g.what)))
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
	}, nil
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
	v := &fileVault{items: map[string]map[string]string{}}
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
