package lab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/redfishemu"
)

// SetHostNICs makes the emulator report the host's frontend NICs: the
// system's EthernetInterfaces, in the tree's order, take the NICs' MAC
// addresses and link states ("up", "down", anything else unknown), through
// the emulator's own Redfish API as its administrator. An interface left
// over keeps what the tree says. A tree with fewer interfaces than the host
// has NICs is an error: the link guard would see the missing ones as
// UNKNOWN and pass.
func SetHostNICs(emu *redfishemu.Emulator, user, password string, nics []fakes.PhysNIC) error {
	ifaces, err := hostInterfaces(emu)
	if err != nil {
		return err
	}
	if len(ifaces) < len(nics) {
		return fmt.Errorf("the %s tree lists %d host interfaces, the host has %d NICs", emu.Vendor(), len(ifaces), len(nics))
	}
	for i, nic := range nics {
		status := "Unknown"
		switch strings.ToLower(nic.Link) {
		case "up":
			status = "LinkUp"
		case "down":
			status = "LinkDown"
		}
		if err := patch(emu, user, password, ifaces[i], map[string]any{"MACAddress": strings.ToUpper(nic.MAC), "LinkStatus": status}); err != nil {
			return err
		}
	}
	return nil
}

// renameAdmin renames the emulator's administrator account from to to,
// through its Redfish API, so every emulator answers to the site's one
// factory credential whatever its vendor's default user name.
func renameAdmin(emu *redfishemu.Emulator, from, password, to string) error {
	if from == to {
		return nil
	}
	for _, p := range members(emu.Doc("/redfish/v1/AccountService/Accounts")) {
		if emu.Doc(p)["UserName"] != from {
			continue
		}
		return patch(emu, from, password, p, map[string]any{"UserName": to})
	}
	return fmt.Errorf("the %s tree has no account %q", emu.Vendor(), from)
}

func patch(emu *redfishemu.Emulator, user, password, path string, body map[string]any) error {
	b, _ := json.Marshal(body)
	req := httptest.NewRequest(http.MethodPatch, path, bytes.NewReader(b))
	req.SetBasicAuth(user, password)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	emu.ServeHTTP(rec, req)
	if rec.Code/100 != 2 {
		return fmt.Errorf("PATCH %s: %d %s", path, rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	return nil
}

// hostInterfaces lists the paths of the first system's EthernetInterfaces
// that carry a MAC address, sorted.
func hostInterfaces(emu *redfishemu.Emulator) ([]string, error) {
	systems := emu.Doc("/redfish/v1/Systems")
	sys := firstMember(systems)
	if sys == "" {
		return nil, fmt.Errorf("the %s tree has no system", emu.Vendor())
	}
	doc := emu.Doc(sys)
	coll, _ := doc["EthernetInterfaces"].(map[string]any)
	path, _ := coll["@odata.id"].(string)
	if path == "" {
		return nil, fmt.Errorf("the %s tree's system has no EthernetInterfaces", emu.Vendor())
	}
	var out []string
	for _, m := range members(emu.Doc(path)) {
		d := emu.Doc(m)
		if mac, _ := d["MACAddress"].(string); mac != "" && !strings.EqualFold(fmt.Sprint(d["Id"]), "ToManager") {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out, nil
}

func members(d map[string]any) []string {
	var out []string
	ms, _ := d["Members"].([]any)
	for _, m := range ms {
		if mm, ok := m.(map[string]any); ok {
			if id, ok := mm["@odata.id"].(string); ok {
				out = append(out, strings.TrimSuffix(id, "/"))
			}
		}
	}
	return out
}

func firstMember(d map[string]any) string {
	ms := members(d)
	if len(ms) == 0 {
		return ""
	}
	return ms[0]
}
