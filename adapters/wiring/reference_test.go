package wiring

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// configKeys lists the yaml keys of t and the types below it, as dotted
// paths (a list's items add nothing to the path). A value that decodes
// itself (a duration, a size, a time, the extensions' instances) is one
// key.
func configKeys(t reflect.Type, prefix string, out map[string]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(nodeDecoderType) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return
	}
	switch t.Kind() {
	case reflect.Slice:
		configKeys(t.Elem(), prefix, out)
	case reflect.Struct:
		for i := range t.NumField() {
			tag := t.Field(i).Tag.Get("yaml")
			if tag == "" || tag == "-" {
				continue
			}
			path := tag
			if prefix != "" {
				path = prefix + "." + tag
			}
			out[path] = true
			configKeys(t.Field(i).Type, path, out)
		}
	}
}

// referenceKeys lists Reference's keys the same way; the names under a
// free mapping are examples and are left out.
func referenceKeys(t *testing.T, keys []Key, prefix string, out map[string]bool) {
	for _, k := range keys {
		path := k.Name
		if prefix != "" {
			path = prefix + "." + k.Name
		}
		out[path] = true
		if k.Alt && (len(k.Keys) > 0 || len(k.Items) > 0) {
			t.Errorf("%s: only a scalar key can be commented out in the sample", path)
		}
		if k.Value == "" && len(k.Keys) == 0 && len(k.Items) == 0 && !k.DocOnly {
			t.Errorf("%s: no sample value, keys or items", path)
		}
		if !k.Free {
			referenceKeys(t, k.Keys, path, out)
		}
		for _, item := range k.Items {
			referenceKeys(t, item, path, out)
		}
	}
}

// Every key of the config structs is documented in Reference, and every
// key Reference documents exists: docs/config.md and the sample cannot
// drift from the code.
func TestReferenceCoversEveryConfigKey(t *testing.T) {
	want := map[string]bool{}
	configKeys(reflect.TypeFor[Config](), "", want)
	got := map[string]bool{}
	referenceKeys(t, Reference, "", got)
	var missing, extra []string
	for k := range want {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("config keys Reference does not document (add them to reference.go): %s", strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		t.Errorf("Reference documents keys the config does not have: %s", strings.Join(extra, ", "))
	}
	var undocumented []string
	var walk func(keys []Key, prefix string, first map[string]bool)
	walk = func(keys []Key, prefix string, seen map[string]bool) {
		for _, k := range keys {
			path := prefix + k.Name
			if k.Doc == "" && !seen[path] {
				undocumented = append(undocumented, path)
			}
			seen[path] = true
			walk(k.Keys, path+".", seen)
			for _, item := range k.Items {
				walk(item, path+"[].", seen)
			}
		}
	}
	walk(Reference, "", map[string]bool{})
	if len(undocumented) > 0 {
		t.Errorf("keys without a description where they first appear: %s", strings.Join(undocumented, ", "))
	}
}

// examplePath is the sample config in the repository.
var examplePath = filepath.Join("..", "..", "examples", "config", "site.yaml")

// The sample config ('hostforge config example', examples/config/site.yaml)
// loads with the real loader: it parses, every key is known and every
// section validates. Nothing it names is opened by the loader.
func TestExampleConfigLoads(t *testing.T) {
	c, err := Load(examplePath)
	if err != nil {
		t.Fatalf("%s does not load: %v", examplePath, err)
	}
	if c.DHCP == nil || c.Vault == nil || c.Ledger == nil || c.Extensions == nil || c.Extensions.NetBoxEvents == nil ||
		c.Firmware == nil || c.Firmware.Scout == nil || len(c.BMC.TLS) != 3 || len(c.BMC.Endpoints) != 1 || len(c.Ironic) != 2 {
		t.Fatalf("the sample leaves a section out: %+v", c)
	}
	if sc := c.SiteConfig(); sc.IronicInstances["HYPERVISOR"] != "ironic-cpu" || !sc.ConfigureDHCP || !sc.ConfigureBMC || !sc.IronicEnrol {
		t.Errorf("the sample maps to %+v", sc)
	}
	if got := c.Extensions.Instances["powerdns"]["apiKey"].Vault; got != "powerdns-api.password" {
		t.Errorf("extensions.instances.powerdns.apiKey = %q, want the vault reference", got)
	}
	// Each key commented out is a real alternative: uncommented in place of
	// the key it replaces, the sample still loads.
	b, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, alt := range []struct{ drop, uncomment string }{
		{"  token_env: HOSTFORGE_NETBOX_TOKEN\n", "  # token_file: /etc/hostforge/netbox-token\n"},
		{"  ca_file: /etc/hostforge/bmc-ca.pem\n", "  # insecure_skip_verify: true\n"},
		{"  driver: sqlite\n  # sqlite: the database file (created if absent).\n  path: /var/lib/hostforge/ledger.db\n", "  # dsn_file: /etc/hostforge/ledger.dsn\n"},
	} {
		doc := string(b)
		if !strings.Contains(doc, alt.drop) || !strings.Contains(doc, alt.uncomment) {
			t.Fatalf("the sample has no %q or %q", alt.drop, alt.uncomment)
		}
		doc = strings.Replace(doc, alt.drop, "", 1)
		line := strings.Replace(alt.uncomment, "# ", "", 1)
		if strings.Contains(line, "dsn_file") {
			line = "  driver: postgres\n" + line
		}
		doc = strings.Replace(doc, alt.uncomment, line, 1)
		if _, err := Parse("site.yaml", []byte(doc)); err != nil {
			t.Errorf("with %s: %v", strings.TrimSpace(line), err)
		}
	}
	for _, l := range strings.Split(string(b), "\n") {
		if len(l) > 100 {
			t.Errorf("a sample line is %d characters wide: %s", len(l), l)
		}
	}
}

// docs/config.md and examples/config/site.yaml are what the reference
// generates: go generate . rewrites them.
func TestConfigDocsAreFresh(t *testing.T) {
	for _, f := range []struct{ path, want string }{
		{filepath.Join("..", "..", "docs", "config.md"), ReferenceMarkdown()},
		{examplePath, ExampleConfig()},
	} {
		got, err := os.ReadFile(f.path)
		if err != nil || string(got) != f.want {
			t.Errorf("%s is stale: run go generate . and commit it (%v)", f.path, err)
		}
	}
}
