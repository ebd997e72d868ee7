package wiring

import (
	"encoding"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

// Config is the config file: the site, the systems it names and the gates.
// Every key is documented in Reference (docs/config.md, and the sample
// 'hostforge config example' prints).
type Config struct {
	Site   string         `yaml:"site"`
	NetBox NetBoxConfig   `yaml:"netbox"`
	Ironic []IronicConfig `yaml:"ironic"`
	Gates  GatesConfig    `yaml:"gates"`
	DHCP   *DHCPConfig    `yaml:"dhcp"`
	BMC    BMCConfig      `yaml:"bmc"`
	Vault  *VaultConfig   `yaml:"vault"`
	// Ledger is the fleet manager's ledger (the ledger section of Reference); nil without one.
	Ledger *sqlstore.LedgerConfig `yaml:"ledger"`
	// Extensions wires workflow extensions (the extensions section of Reference).
	Extensions *ExtensionsConfig `yaml:"extensions"`
	// Firmware is the managed-host firmware updates (the firmware section of Reference);
	// nil without them.
	Firmware *FirmwareConfig `yaml:"firmware"`
	// Retire is how hosts are retired (see retireHelp); nil: the defaults.
	Retire *RetireConfig `yaml:"retire"`

	// path is the file the config was read from, for messages.
	path string
	// lines maps each key path ("netbox.url", "ironic[1].name") to its line.
	lines map[string]int
}

// NetBoxConfig locates NetBox and its token.
type NetBoxConfig struct {
	URL                string `yaml:"url"`
	TokenEnv           string `yaml:"token_env"`
	TokenFile          string `yaml:"token_file"`
	CAFile             string `yaml:"ca_file"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// IronicConfig is one Ironic instance and the device classes it manages.
type IronicConfig struct {
	Name               string   `yaml:"name"`
	URL                string   `yaml:"url"`
	DeviceClasses      []string `yaml:"device_classes"`
	CAFile             string   `yaml:"ca_file"`
	InsecureSkipVerify bool     `yaml:"insecure_skip_verify"`
	// LearnedPace turns the learned pace (ironic.Pace) on, the default, or
	// off (false: the poll policy alone).
	LearnedPace *bool `yaml:"learned_pace"`
	// Timing tunes the Ironic phases' polls and budgets; absent fields take
	// ironic.Timing's defaults.
	Timing IronicTiming `yaml:"timing"`
}

// IronicTiming is an instance's ironic.Timing; zero fields take its
// defaults (real-hardware values). The *_max keys are the caps of each kind
// of wait (ironic.Timing documents the poll policy).
type IronicTiming struct {
	StatePoll         enrollment.Duration `yaml:"state_poll"`
	StatePollMax      enrollment.Duration `yaml:"state_poll_max"`
	LockRetry         enrollment.Duration `yaml:"lock_retry"`
	InspectionPoll    enrollment.Duration `yaml:"inspection_poll"`
	InspectionPollMax enrollment.Duration `yaml:"inspection_poll_max"`
	InspectionTimeout enrollment.Duration `yaml:"inspection_timeout"`
	PowerOnTimeout    enrollment.Duration `yaml:"power_on_timeout"`
	LinkBudget        enrollment.Duration `yaml:"link_budget"`
	CleanPollMin      enrollment.Duration `yaml:"clean_poll_min"`
	CleanPollMax      enrollment.Duration `yaml:"clean_poll_max"`
	InventoryGrace    enrollment.Duration `yaml:"inventory_grace"`
}

// Phases is the section as the Ironic phases' timing.
func (t IronicTiming) Phases() ironic.Timing {
	return ironic.Timing{
		StatePoll: t.StatePoll.D(), StatePollMax: t.StatePollMax.D(),
		LockRetry: t.LockRetry.D(), InspectionPoll: t.InspectionPoll.D(), InspectionPollMax: t.InspectionPollMax.D(),
		InspectionTimeout: t.InspectionTimeout.D(), PowerOnTimeout: t.PowerOnTimeout.D(), LinkBudget: t.LinkBudget.D(),
		CleanPollMin: t.CleanPollMin.D(), CleanPollMax: t.CleanPollMax.D(), InventoryGrace: t.InventoryGrace.D(),
	}
}

// fields lists the section's keys and values, for validation.
func (t IronicTiming) fields() []struct {
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

// BMCConfig is how the BMCs' Redfish service is reached and its
// certificates verified.
type BMCConfig struct {
	CAFile             string `yaml:"ca_file"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
	// Endpoints reach some BMCs at another host:port than their
	// out-of-band address (which NetBox records and the DHCP reservation
	// uses): a jump host's forwarded port, a lab's emulator.
	Endpoints []BMCEndpoint `yaml:"endpoints"`
	// TLS, Networks and RedfishVerifyCAPaths: see tls.go and the bmc section of Reference.
	TLS                  []BMCTLS `yaml:"tls"`
	Networks             []string `yaml:"networks"`
	RedfishVerifyCAPaths []string `yaml:"redfish_verify_ca_paths"`
}

// BMCEndpoint is where the BMC whose out-of-band address is Address is
// reached.
type BMCEndpoint struct {
	Address  string `yaml:"address"`
	Endpoint string `yaml:"endpoint"`
}

// EndpointMap is the endpoints by out-of-band address.
func (b BMCConfig) EndpointMap() map[string]string {
	out := make(map[string]string, len(b.Endpoints))
	for _, e := range b.Endpoints {
		out[e.Address] = e.Endpoint
	}
	return out
}

// GatesConfig are the site's gates, mapped onto enrollment.SiteConfig.
type GatesConfig struct {
	ConfigureDHCP               bool                `yaml:"enrollment_configure_dhcp"`
	ConfigureBMC                bool                `yaml:"enrollment_configure_bmc"`
	IronicEnrol                 bool                `yaml:"enrollment_ironic_enrol"`
	SwitchToIPMIAfterInspection bool                `yaml:"switch_to_ipmi_after_inspection"`
	RestrictBoot                *bool               `yaml:"restrict_boot"`
	PlatformClassActivityReady  bool                `yaml:"platform_class_activity_ready"`
	IronicTag                   string              `yaml:"ironic_tag"`
	NodeLockMaxWait             enrollment.Duration `yaml:"node_lock_max_wait"`
	CleaningDeadline            enrollment.Duration `yaml:"cleaning_deadline"`
	MaxAttempts                 int                 `yaml:"max_attempts"`
	EnrolProject                string              `yaml:"enrol_project"`
}

// DHCPConfig is the DHCP server enrollment uploads reservations to, over
// SSH (adapters/ssh). Empty fields take the flavour's defaults
// (dhcp.Defaults); the SSH key and known_hosts come from the vault.
type DHCPConfig struct {
	Host       string       `yaml:"host"`
	User       string       `yaml:"user"`
	Flavour    string       `yaml:"flavour"`
	Dir        string       `yaml:"dir"`
	ConfigTest string       `yaml:"config_test"`
	Restart    string       `yaml:"restart"`
	Status     string       `yaml:"status"`
	Timeouts   DHCPTimeouts `yaml:"timeouts"`
}

// DHCPTimeouts are the SSH adapter's deadlines; zero takes its default
// (ssh.DefaultTimeout).
type DHCPTimeouts struct {
	Connect  enrollment.Duration `yaml:"connect"`
	Login    enrollment.Duration `yaml:"login"`
	Command  enrollment.Duration `yaml:"command"`
	Transfer enrollment.Duration `yaml:"transfer"`
}

// Server is the section as the DHCP phase's settings.
func (d *DHCPConfig) Server() dhcp.Config {
	return dhcp.Config{Flavour: dhcp.Flavour(d.Flavour), Dir: d.Dir, ConfigTest: d.ConfigTest, Restart: d.Restart, Status: d.Status}
}

// Addr is Host with port 22 added when it names no port.
func (d *DHCPConfig) Addr() (string, error) {
	host := d.Host
	if strings.Contains(host, "@") {
		return "", fmt.Errorf("%q: put the login user in dhcp.user, not in the host", host)
	}
	bad := fmt.Errorf("%q: want host or host:port, e.g. dhcp1.example.net:22", host)
	if host == "" || strings.ContainsAny(host, "/ \t\n\x00") {
		return "", bad
	}
	if h, p, err := net.SplitHostPort(host); err == nil {
		if h == "" {
			return "", bad
		}
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("%q: the port %q is not a number from 1 to 65535", host, p)
		}
		return host, nil
	}
	if strings.ContainsAny(host, "[]") || strings.Contains(host, ":") && net.ParseIP(host) == nil {
		return "", bad
	}
	return net.JoinHostPort(host, "22"), nil
}

// VaultConfig chooses the secrets vault.
type VaultConfig struct {
	Kind string `yaml:"kind"`
	Path string `yaml:"path"`
}

// SiteConfig maps the gates and Ironic instances onto the workflow's site
// configuration.
func (c *Config) SiteConfig() enrollment.SiteConfig {
	s := enrollment.SiteConfig{
		ConfigureDHCP:               c.Gates.ConfigureDHCP,
		ConfigureBMC:                c.Gates.ConfigureBMC,
		IronicEnrol:                 c.Gates.IronicEnrol,
		SwitchToIPMIAfterInspection: c.Gates.SwitchToIPMIAfterInspection,
		RestrictBoot:                c.Gates.RestrictBoot,
		IronicTag:                   c.Gates.IronicTag,
		NodeLockMaxWait:             c.Gates.NodeLockMaxWait,
		CleaningDeadline:            c.Gates.CleaningDeadline,
		MaxAttempts:                 c.Gates.MaxAttempts,
		IronicInstances:             map[string]string{},
		EnrolProject:                c.Gates.EnrolProject,
		BMCNetworks:                 c.BMC.Networks,
		RedfishVerifyCAPaths:        c.BMC.RedfishVerifyCAPaths,
	}
	for _, ir := range c.Ironic {
		for _, dc := range ir.DeviceClasses {
			s.IronicInstances[dc] = ir.Name
		}
	}
	return s
}

// Load reads and validates a config file. A file it cannot read is
// CONFIG_UNREADABLE; its other errors are CONFIG_INVALID
// failures naming the file, the key and the line.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, ConfigUnreadable.New("--config %s: %v", path, err)
	}
	return Parse(path, b)
}

// Parse parses and validates the config document b read from path. Its
// errors are CONFIG_INVALID failures naming the file, the key and the line.
func Parse(path string, b []byte) (*Config, error) {
	c, err := parseConfig(b)
	if err != nil {
		return nil, ConfigInvalid.New("%s: %s", path, err)
	}
	c.path = path
	return c, nil
}

// Path is the file the config was read from.
func (c *Config) Path() string { return c.path }

// parseConfig decodes and validates a config document. Errors name the key
// and its line.
func parseConfig(b []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			return nil, fmt.Errorf("line %s: not valid YAML: %s", m[1], m[2])
		}
		// The reader's errors (encoding, control characters) carry no
		// position: find the offending character's line.
		return nil, fmt.Errorf("line %d: not valid YAML: %s", badCharLine(b), msg)
	}
	c := &Config{lines: map[string]int{}}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("line 1: the file holds no YAML document; want a mapping with at least site and netbox")
	}
	d := decoder{lines: c.lines, nodes: new(int)}
	if err := d.decode("", doc.Content[0], reflect.ValueOf(c).Elem()); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

var yamlLine = regexp.MustCompile(`^line ([0-9]+): (.*)$`)

// badCharLine is the line of b's first byte that is not UTF-8 or is a
// character YAML does not allow (a control character other than tab, line
// feed and carriage return, or a surrogate or non-character); 1 when there
// is none.
func badCharLine(b []byte) int {
	line := 1
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		ok := r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0x7e || r == 0x85 ||
			r >= 0xa0 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd || r >= 0x10000 && r <= 0x10ffff
		if r == utf8.RuneError && n <= 1 || !ok {
			return line
		}
		if r == '\n' {
			line++
		}
		i += n
	}
	return 1
}

// invalid is a CONFIG_INVALID failure naming the file, a key and its line.
func (c *Config) invalid(key, format string, args ...any) error {
	err := c.keyError(key, format, args...)
	if c.path != "" {
		return ConfigInvalid.New("%s: %s", c.path, err)
	}
	return ConfigInvalid.New("%s", err)
}

// keyError names a key and its line.
func (c *Config) keyError(key, format string, args ...any) error {
	line, ok := c.lines[key]
	if !ok {
		// a missing key: name its parent's line when known
		parent := key
		for !ok && parent != "" {
			if i := strings.LastIndexAny(parent, ".["); i >= 0 {
				parent = parent[:i]
			} else {
				parent = ""
			}
			line, ok = c.lines[parent]
		}
	}
	if ok {
		return fmt.Errorf("line %d: %s: %s", line, key, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...))
}

func (c *Config) validate() error {
	if strings.TrimSpace(c.Site) == "" {
		return c.keyError("site", "missing: the site slug requests are submitted for")
	}
	if c.NetBox.URL == "" {
		return c.keyError("netbox.url", "missing: NetBox's base URL, e.g. https://netbox.example.net")
	}
	if err := checkURL(c.NetBox.URL); err != nil {
		return c.keyError("netbox.url", "%v", err)
	}
	if c.NetBox.TokenEnv != "" && c.NetBox.TokenFile != "" {
		return c.keyError("netbox.token_file", "set token_env or token_file, not both")
	}
	seenName := map[string]bool{}
	seenClass := map[string]string{}
	for i, ir := range c.Ironic {
		at := fmt.Sprintf("ironic[%d]", i)
		if ir.Name == "" {
			return c.keyError(at+".name", "missing: the instance name")
		}
		if seenName[ir.Name] {
			return c.keyError(at+".name", "instance %q is named twice", ir.Name)
		}
		seenName[ir.Name] = true
		if ir.URL == "" {
			return c.keyError(at+".url", "missing: the Ironic API endpoint")
		}
		if err := checkURL(ir.URL); err != nil {
			return c.keyError(at+".url", "%v", err)
		}
		for _, f := range ir.Timing.fields() {
			if f.d < 0 {
				return c.keyError(at+".timing."+f.key, "negative duration")
			}
		}
		// A cap shorter than its kind's first poll is a typo, not a wish.
		for _, pair := range []struct {
			capKey, firstKey string
			cap, first       enrollment.Duration
		}{
			{"clean_poll_max", "clean_poll_min", ir.Timing.CleanPollMax, ir.Timing.CleanPollMin},
			{"state_poll_max", "state_poll", ir.Timing.StatePollMax, ir.Timing.StatePoll},
			{"inspection_poll_max", "inspection_poll", ir.Timing.InspectionPollMax, ir.Timing.InspectionPoll},
		} {
			if pair.first > 0 && pair.cap > 0 && pair.cap < pair.first {
				return c.keyError(at+".timing."+pair.capKey, "%s is shorter than %s %s", pair.cap.D(), pair.firstKey, pair.first.D())
			}
		}
		if len(ir.DeviceClasses) == 0 {
			return c.keyError(at+".device_classes", "missing: the device classes this instance manages")
		}
		for j, dc := range ir.DeviceClasses {
			key := fmt.Sprintf("%s.device_classes[%d]", at, j)
			switch dc {
			case intent.ClassGPUCompute, intent.ClassCPUBaremetal, intent.ClassHypervisor:
			default:
				return c.keyError(key, "%q is not a device class Ironic manages (GPU_COMPUTE, CPU_BAREMETAL, HYPERVISOR)", dc)
			}
			if prev, dup := seenClass[dc]; dup {
				return c.keyError(key, "%s is already routed to %s; a device class has one Ironic instance", dc, prev)
			}
			seenClass[dc] = ir.Name
		}
	}
	g := c.Gates
	if g.IronicEnrol && len(c.Ironic) == 0 {
		return c.keyError("ironic", "missing: gates.enrollment_ironic_enrol is on, so at least one Ironic instance is needed")
	}
	if g.MaxAttempts < 0 {
		return c.keyError("gates.max_attempts", "%d: want 1 or more (0 or absent for the default %d)", g.MaxAttempts, enrollment.DefaultMaxAttempts)
	}
	if g.NodeLockMaxWait < 0 {
		return c.keyError("gates.node_lock_max_wait", "negative duration")
	}
	if g.CleaningDeadline < 0 {
		return c.keyError("gates.cleaning_deadline", "negative duration")
	}
	if g.ConfigureDHCP {
		if c.DHCP == nil {
			return c.keyError("dhcp", "missing: gates.enrollment_configure_dhcp is on, so the DHCP target is needed")
		}
	}
	if c.DHCP != nil {
		if err := c.validateDHCP(); err != nil {
			return err
		}
	}
	if err := c.validateBMCTLS(); err != nil {
		return err
	}
	seenAddr := map[string]bool{}
	for i, e := range c.BMC.Endpoints {
		at := fmt.Sprintf("bmc.endpoints[%d]", i)
		if ip := net.ParseIP(e.Address); ip == nil {
			return c.keyError(at+".address", "%q: want the BMC's out-of-band IP address, as NetBox records it", e.Address)
		}
		if seenAddr[e.Address] {
			return c.keyError(at+".address", "%s has two endpoints", e.Address)
		}
		seenAddr[e.Address] = true
		if err := checkHostPort(e.Endpoint); err != nil {
			return c.keyError(at+".endpoint", "%v", err)
		}
	}
	if c.Vault != nil {
		switch c.Vault.Kind {
		case "file":
			if c.Vault.Path == "" {
				return c.keyError("vault.path", "missing: the vault file")
			}
		default:
			return c.keyError("vault.kind", "%q: want file", c.Vault.Kind)
		}
	}
	if err := c.validateLedger(); err != nil {
		return err
	}
	if err := c.validateFirmware(); err != nil {
		return err
	}
	if err := c.validateRetire(); err != nil {
		return err
	}
	if (g.ConfigureBMC || g.IronicEnrol || g.ConfigureDHCP) && c.Vault == nil {
		return c.keyError("vault", "missing: the DHCP, BMC and Ironic phases read credentials from the vault")
	}
	return c.validateExtensions()
}

// validateDHCP checks the dhcp section whenever it is present, so a typo
// is caught before the gate is turned on.
func (c *Config) validateDHCP() error {
	d := c.DHCP
	if d.Host == "" {
		return c.keyError("dhcp.host", "missing: the DHCP server's host[:port]")
	}
	if _, err := d.Addr(); err != nil {
		return c.keyError("dhcp.host", "%v", err)
	}
	if strings.ContainsAny(d.User, " \t\n\x00") {
		return c.keyError("dhcp.user", "%q: a login user has no spaces or control characters", d.User)
	}
	if _, err := d.Server().Resolved(); err != nil {
		var fe *dhcp.FieldError
		if errors.As(err, &fe) {
			return c.keyError("dhcp."+fe.Field, "%q: %s", fe.Value, fe.Reason)
		}
		return c.keyError("dhcp", "%v", err)
	}
	for _, t := range []struct {
		key string
		d   enrollment.Duration
	}{{"connect", d.Timeouts.Connect}, {"login", d.Timeouts.Login}, {"command", d.Timeouts.Command}, {"transfer", d.Timeouts.Transfer}} {
		if t.d < 0 {
			return c.keyError("dhcp.timeouts."+t.key, "negative duration")
		}
	}
	return nil
}

// checkHostPort accepts host:port with a port from 1 to 65535.
func checkHostPort(s string) error {
	h, p, err := net.SplitHostPort(s)
	if err != nil || h == "" || strings.ContainsAny(s, "/@ \t\n\x00") {
		return fmt.Errorf("%q: want host:port, e.g. 127.0.0.1:40443", s)
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: the port %q is not a number from 1 to 65535", s, p)
	}
	return nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%q is not an http(s) URL", s)
	}
	if u.User != nil {
		return fmt.Errorf("the URL carries credentials; put secrets in the environment or a file instead")
	}
	return nil
}

// decoder decodes a YAML node tree into Go values strictly: an unknown key
// or a value of the wrong type is an error naming the key and its line.
type decoder struct {
	lines map[string]int
	// nodes counts the values decoded, aliases expanded, against maxNodes.
	nodes *int
}

// maxNodes bounds the values one document may expand to, so aliases of
// aliases cannot make a small file cost minutes and gigabytes.
const maxNodes = 100_000

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// nodeDecoder is a config value that decodes its own YAML node (a mapping
// whose keys are names, not fields); it records the lines of the keys it
// reads in lines.
type nodeDecoder interface {
	decodeNode(path string, n *yaml.Node, lines map[string]int) error
}

var nodeDecoderType = reflect.TypeFor[nodeDecoder]()

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d decoder) decode(path string, n *yaml.Node, v reflect.Value) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if *d.nodes++; *d.nodes > maxNodes {
		return fmt.Errorf("line %d: %s: the document expands to more than %d values; use fewer aliases", n.Line, path, maxNodes)
	}
	if path != "" {
		d.lines[path] = n.Line
	}
	at := func(format string, args ...any) error {
		name := path
		if name == "" {
			name = "the document"
		}
		return fmt.Errorf("line %d: %s: %s", n.Line, name, fmt.Sprintf(format, args...))
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // absent
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.decode(path, n, v.Elem())
	}
	if v.Addr().Type().Implements(nodeDecoderType) {
		return v.Addr().Interface().(nodeDecoder).decodeNode(path, n, d.lines)
	}
	if v.Addr().Type().Implements(textUnmarshaler) {
		if n.Kind != yaml.ScalarNode {
			return at("want a scalar value, got a %s", kindName(n))
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
			return at("%v", err)
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return at("want a mapping of keys, got a %s", kindName(n))
		}
		fields := map[string]int{}
		var known []string
		for i := range v.NumField() {
			tag := v.Type().Field(i).Tag.Get("yaml")
			if tag == "" || tag == "-" {
				continue
			}
			fields[tag] = i
			known = append(known, tag)
		}
		sort.Strings(known)
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			idx, ok := fields[k.Value]
			key := join(path, k.Value)
			if !ok {
				return fmt.Errorf("line %d: %s: unknown key (known here: %s)", k.Line, key, strings.Join(known, ", "))
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: %s: key given twice", k.Line, key)
			}
			seen[k.Value] = true
			if err := d.decode(key, val, v.Field(idx)); err != nil {
				return err
			}
			d.lines[key] = k.Line
		}
		return nil
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return at("want a list, got a %s", kindName(n))
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if err := d.decode(fmt.Sprintf("%s[%d]", path, i), item, s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return at("want a string, got a %s", kindName(n))
		}
		v.SetString(n.Value)
		return nil
	case reflect.Bool:
		b, ok := map[string]bool{"true": true, "false": false}[n.Value]
		if n.Kind != yaml.ScalarNode || !ok {
			return at("want true or false, got %s", describe(n))
		}
		v.SetBool(b)
		return nil
	case reflect.Int:
		i, err := strconv.Atoi(n.Value)
		if n.Kind != yaml.ScalarNode || err != nil {
			return at("want a whole number, got %s", describe(n))
		}
		v.SetInt(int64(i))
		return nil
	}
	return at("cannot hold a %s (a hostforge bug)", v.Kind())
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "scalar"
}

func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return strconv.Quote(n.Value)
	}
	return "a " + kindName(n)
}
