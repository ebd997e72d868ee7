package verify_test

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/internal/realdata"
	"github.com/hostforge/hostforge/verify"
)

// realHost is one real inventory from the shared test data and the NetBox
// expectation written for it in testdata/.
type realHost struct {
	name   string
	path   []string // under the real-data directory
	expect string   // under testdata/
	// faults lists the fault names that apply to this host (a VM reports no
	// disk model and no LLDP, so a disk-model or cable fault cannot show).
	faults []string
	// frontend is the frontend interface the carrier and cable faults touch
	// (kernel name) and the NetBox cable it belongs to.
	frontend, nbName string
	// movedTo is the switch port the moved-cable fault moves it to.
	movedTo string
}

var realHosts = []realHost{
	{
		name: "dell-r7615", path: []string{"ipa-inventory", "understack", "dell-r7615-inventory-raw-lldp.json"},
		expect: "dell-r7615.yaml", frontend: "eno4np1", nbName: "NIC.Integrated.1-2", movedTo: "Ethernet1/9",
		faults: []string{"moved-cable", "missing-dimm", "wrong-disk", "blocked-bios", "no-carrier", "gpu-missing"},
	},
	{
		name: "dell-r320", path: []string{"ipa-inventory", "metal3-docs", "dell-r320-inspector-data-lldp.json"},
		expect: "dell-r320.yaml", frontend: "p2p1", nbName: "p2p1", movedTo: "ge-0/0/30",
		faults: []string{"moved-cable", "missing-dimm", "wrong-disk", "blocked-bios", "no-carrier", "gpu-missing"},
	},
	{
		name: "kvm-vm", path: []string{"ipa-inventory", "metal3-docs", "kvm-vm-inspector-data.json"},
		expect: "kvm-vm.yaml", frontend: "eth1", nbName: "eth1",
		faults: []string{"missing-dimm", "blocked-bios", "no-carrier", "gpu-missing"},
	},
	{
		name: "inspector-api-ref", path: []string{"ipa-inventory", "ironic-inspector-api-ref", "api-v1-data-introspection-response.json"},
		expect: "inspector-api-ref.yaml", frontend: "eth0", nbName: "eth0",
		faults: []string{"missing-dimm", "blocked-bios", "no-carrier", "gpu-missing"},
	},
	{
		name: "ironic-api-ref", path: []string{"ipa-inventory", "ironic-api-ref", "node-inventory-response.json"},
		expect: "ironic-api-ref.json", frontend: "eth0", nbName: "eth0",
		faults: []string{"blocked-bios", "no-carrier", "gpu-missing"},
	},
}

// doc is an inventory document as generic JSON, for injecting faults.
type doc map[string]any

func loadDoc(t *testing.T, h realHost) doc {
	t.Helper()
	var d doc
	if err := json.Unmarshal(realdata.Read(t, h.path...), &d); err != nil {
		t.Fatalf("%s: %v", h.name, err)
	}
	return d
}

func (d doc) inventory() map[string]any { return d["inventory"].(map[string]any) }

// plugin is where plugin data lives: plugin_data, or the top level (legacy).
func (d doc) plugin() map[string]any {
	if p, ok := d["plugin_data"].(map[string]any); ok {
		return p
	}
	return d
}

func (d doc) iface(t *testing.T, name string) map[string]any {
	t.Helper()
	for _, i := range d.inventory()["interfaces"].([]any) {
		if m := i.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("no interface %s", name)
	return nil
}

func (d doc) parse(t *testing.T) verify.Inventory {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := verify.ParseInventory(b)
	if err != nil {
		t.Fatalf("ParseInventory: %v", err)
	}
	return inv
}

func loadExpect(t *testing.T, name string) verify.Expectations {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	exp, err := verify.LoadExpectations(b)
	if err != nil {
		t.Fatalf("LoadExpectations(%s): %v", name, err)
	}
	return exp
}

// addGPUs gives the host two L40S GPUs and a NIC function in
// plugin_data.pci_devices — synthetic: no real inventory with pci_devices
// exists — and expects exactly those GPUs.
func addGPUs(d doc, exp *verify.Expectations) {
	d.plugin()["pci_devices"] = []any{
		map[string]any{"vendor_id": "10de", "product_id": "26b9", "class": "030200", "revision": "a1", "bus": "0000:17:00.0"},
		map[string]any{"vendor_id": "14e4", "product_id": "16d7", "class": "020000", "revision": "01", "bus": "0000:c5:00.0"},
		map[string]any{"vendor_id": "10de", "product_id": "26b9", "class": "030200", "revision": "a1", "bus": "0000:ca:00.0"},
	}
	exp.CheckGPUs = true
	exp.GPUs = []verify.GPUExpect{{VendorID: "10de", DeviceID: "26b9", Count: 2}}
}

// fault breaks one thing on the host and says which single mismatch must
// follow: its check, its subject, and words its action must contain.
type fault struct {
	name    string
	apply   func(t *testing.T, h realHost, d doc, exp *verify.Expectations)
	check   string
	subject func(h realHost) string
	action  func(h realHost, exp verify.Expectations) []string
	code    *hostforge.Spec
}

func setTLV(t *testing.T, m map[string]any, typ int, value []byte) {
	t.Helper()
	for _, p := range m["lldp"].([]any) {
		pair := p.([]any)
		if int(pair[0].(float64)) == typ {
			pair[1] = hex.EncodeToString(value)
			return
		}
	}
	t.Fatalf("interface %s has no TLV %d", m["name"], typ)
}

func tlvValue(t *testing.T, m map[string]any, typ int) []byte {
	t.Helper()
	for _, p := range m["lldp"].([]any) {
		pair := p.([]any)
		if int(pair[0].(float64)) == typ {
			b, err := hex.DecodeString(pair[1].(string))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	return nil
}

func cableOf(exp verify.Expectations, nb string) verify.Cable {
	for _, c := range exp.Cables {
		if c.Interface == nb {
			return c
		}
	}
	return verify.Cable{}
}

var faults = []fault{
	{
		name: "moved-cable",
		apply: func(t *testing.T, h realHost, d doc, _ *verify.Expectations) {
			m := d.iface(t, h.frontend)
			oldPort := tlvValue(t, m, verify.TLVPortID)[1:]
			setTLV(t, m, verify.TLVPortID, append([]byte{5}, h.movedTo...))
			if string(tlvValue(t, m, verify.TLVPortDescription)) == string(oldPort) {
				setTLV(t, m, verify.TLVPortDescription, []byte(h.movedTo))
			}
		},
		check:   verify.CheckLLDP,
		subject: func(h realHost) string { return h.nbName },
		action: func(h realHost, exp verify.Expectations) []string {
			c := cableOf(exp, h.nbName)
			return []string{"switch " + c.Switch + " port " + c.Port + ": NetBox expects host " + exp.Device, h.movedTo}
		},
		code: verify.CablingMismatch,
	},
	{
		name: "missing-dimm",
		apply: func(t *testing.T, h realHost, d doc, _ *verify.Expectations) {
			mem := d.inventory()["memory"].(map[string]any)
			lost := 8192.0
			if extra, ok := d.plugin()["extra"].(map[string]any); ok {
				banks := extra["memory"].(map[string]any)
				lost = banks["bank:5"].(map[string]any)["size"].(float64) / (1 << 20)
				delete(banks, "bank:5")
			}
			mem["physical_mb"] = mem["physical_mb"].(float64) - lost
			mem["total"] = mem["total"].(float64) - lost*(1<<20)
		},
		check:   verify.CheckMemory,
		subject: func(realHost) string { return "memory" },
		action: func(h realHost, exp verify.Expectations) []string {
			return []string{"host " + exp.Device, "reseat or replace"}
		},
		code: verify.HardwareMismatch,
	},
	{
		name: "wrong-disk",
		apply: func(t *testing.T, h realHost, d doc, _ *verify.Expectations) {
			disks := d.inventory()["disks"].([]any)
			disks[0].(map[string]any)["model"] = "SAMSUNG MZ7LH480"
		},
		check:   verify.CheckDisks,
		subject: func(realHost) string { return "/dev/sda" },
		action: func(h realHost, exp verify.Expectations) []string {
			return []string{"host " + exp.Device, "disk /dev/sda", `model "SAMSUNG MZ7LH480"`, "replace the drive"}
		},
		code: verify.HardwareMismatch,
	},
	{
		name: "blocked-bios",
		apply: func(t *testing.T, h realHost, d doc, exp *verify.Expectations) {
			sv, _ := d.inventory()["system_vendor"].(map[string]any)
			if sv == nil {
				sv = map[string]any{}
				d.inventory()["system_vendor"] = sv
			}
			sv["firmware"] = map[string]any{"vendor": "Dell Inc.", "version": exp.BIOS.Block[0], "build_date": "01/01/2020"}
		},
		check:   verify.CheckBIOS,
		subject: func(realHost) string { return "bios" },
		action: func(h realHost, exp verify.Expectations) []string {
			return []string{"host " + exp.Device, "BIOS " + exp.BIOS.Block[0] + " is on NetBox's block list", "update the BIOS"}
		},
		code: verify.HardwareMismatch,
	},
	{
		name: "no-carrier",
		apply: func(t *testing.T, h realHost, d doc, _ *verify.Expectations) {
			m := d.iface(t, h.frontend)
			m["has_carrier"] = false
			if m["lldp"] != nil {
				m["lldp"] = []any{} // no link, nothing heard
			}
			if all, ok := d.plugin()["all_interfaces"].(map[string]any); ok {
				if a, ok := all[h.frontend].(map[string]any); ok {
					delete(a, "lldp_processed")
					if a["lldp"] != nil {
						a["lldp"] = []any{}
					}
				}
			}
		},
		check:   verify.CheckCarrier,
		subject: func(h realHost) string { return h.nbName },
		action: func(h realHost, exp verify.Expectations) []string {
			c := cableOf(exp, h.nbName)
			if c.Switch == "" {
				return []string{"host " + exp.Device, "interface " + h.nbName, "no link"}
			}
			return []string{"switch " + c.Switch + " port " + c.Port + ": host " + exp.Device, "no link", "optics"}
		},
		code: verify.CablingMismatch,
	},
	{
		name: "gpu-missing",
		apply: func(t *testing.T, h realHost, d doc, exp *verify.Expectations) {
			addGPUs(d, exp)
			pci := d.plugin()["pci_devices"].([]any)
			d.plugin()["pci_devices"] = pci[:2] // the GPU at 0000:ca:00.0 is gone
		},
		check:   verify.CheckGPU,
		subject: func(realHost) string { return "10de:26b9" },
		action: func(h realHost, exp verify.Expectations) []string {
			return []string{"host " + exp.Device, "NetBox expects 2 NVIDIA Corporation L40S GPU(s)", "reports 1", "reseat or replace"}
		},
		code: verify.HardwareMismatch,
	},
}

func TestRealInventoriesPassTheirExpectations(t *testing.T) {
	for _, h := range realHosts {
		t.Run(h.name, func(t *testing.T) {
			d := loadDoc(t, h)
			exp := loadExpect(t, h.expect)
			rep := verify.Check(d.parse(t), exp)
			if !rep.OK() {
				t.Fatalf("real inventory fails its own expectation:\n%s", dump(rep))
			}
			if err := rep.Err(); err != nil {
				t.Fatalf("Err() = %v on an OK report", err)
			}
			// The same host with GPUs passes an expectation that counts them.
			addGPUs(d, &exp)
			if rep := verify.Check(d.parse(t), exp); !rep.OK() {
				t.Fatalf("with GPUs:\n%s", dump(rep))
			}
		})
	}
}

func TestRealInventoriesReportEachFaultAlone(t *testing.T) {
	byName := map[string]fault{}
	for _, f := range faults {
		byName[f.name] = f
	}
	for _, h := range realHosts {
		for _, fname := range h.faults {
			f := byName[fname]
			t.Run(h.name+"/"+f.name, func(t *testing.T) {
				d := loadDoc(t, h)
				exp := loadExpect(t, h.expect)
				f.apply(t, h, d, &exp)
				rep := verify.Check(d.parse(t), exp)
				if len(rep.Mismatches) != 1 {
					t.Fatalf("want exactly one mismatch, got %d:\n%s", len(rep.Mismatches), dump(rep))
				}
				m := rep.Mismatches[0]
				if m.Check != f.check || m.Subject != f.subject(h) {
					t.Errorf("mismatch is [%s %s], want [%s %s]", m.Check, m.Subject, f.check, f.subject(h))
				}
				for _, want := range f.action(h, exp) {
					if !strings.Contains(m.Action, want) {
						t.Errorf("action %q does not say %q", m.Action, want)
					}
				}
				if m.Expected == "" || m.Observed == "" || m.Expected == m.Observed {
					t.Errorf("expected %q / observed %q must both be stated and differ", m.Expected, m.Observed)
				}
				err := rep.Err()
				fl, ok := hostforge.AsFailure(err)
				if !ok || fl.Code != f.code.Code || fl.Owner != hostforge.OwnerDCOps || fl.Retryable {
					t.Fatalf("Err() = %#v, want a non-retryable DC_OPS %s", err, f.code.Code)
				}
				if !strings.Contains(fl.Message, m.Action) {
					t.Errorf("failure message does not carry the action: %s", fl.Message)
				}
			})
		}
	}
}

func dump(r verify.Report) string {
	b, _ := json.MarshalIndent(r, "", "  ")
	return string(b)
}
