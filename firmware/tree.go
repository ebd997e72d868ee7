package firmware

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/hostforge/hostforge/bmc"
)

// A saved Redfish tree is a directory in DMTF mockup layout: the resource
// at /redfish/v1/X/Y is the file redfish/v1/X/Y/index.json. ReadSavedTree
// reads a host's identity and firmware inventory from one, with nothing but
// encoding/json.

// TreeResult is what ReadSavedTree found, and what it had to leave out.
type TreeResult struct {
	Inventory Inventory
	// Warnings say what the tree lacks: a member listed by the inventory
	// collection whose own document is absent (it is left out: its version
	// and state are unknown, and an unknown is never drift), no system
	// document, no FirmwareInventory.
	Warnings []string
}

// ReadSavedTree reads the tree under dir. dir may be the capture's
// directory (holding redfish/v1/index.json), its redfish directory, or its
// redfish/v1 directory.
func ReadSavedTree(dir string) (TreeResult, error) {
	for _, base := range []string{"redfish/v1", "v1", "."} {
		if st, err := os.Stat(filepath.Join(dir, base, "index.json")); err == nil && !st.IsDir() {
			return ReadTree(os.DirFS(filepath.Join(dir, base)))
		}
	}
	return TreeResult{}, InventoryUnreadable.New("%s holds no Redfish service root (redfish/v1/index.json)", dir)
}

// ReadTree reads a tree whose root (the service root's index.json) is
// fsys's top directory.
func ReadTree(fsys fs.FS) (TreeResult, error) {
	t := treeReader{fsys: fsys}
	var res TreeResult
	rootRaw, err := t.read("/redfish/v1")
	if err != nil {
		return res, err
	}
	var root struct {
		Systems       link `json:"Systems"`
		Managers      link `json:"Managers"`
		UpdateService link `json:"UpdateService"`
	}
	if err := json.Unmarshal(rootRaw, &root); err != nil {
		return res, InventoryUnreadable.Wrap(err, "service root index.json")
	}

	// Identity: the first system with a model, and the first manager.
	var sysRaw, mgrRaw []byte
	var sys struct {
		Manufacturer string `json:"Manufacturer"`
		Model        string `json:"Model"`
	}
	for _, m := range t.members(orDefault(root.Systems.ID, "/redfish/v1/Systems"), &res) {
		raw, ok := t.member(m)
		if !ok {
			continue
		}
		var s struct {
			Manufacturer *string `json:"Manufacturer"`
			Model        *string `json:"Model"`
		}
		if json.Unmarshal(raw, &s) != nil || s.Model == nil || strings.TrimSpace(*s.Model) == "" {
			continue
		}
		sysRaw = raw
		sys.Model = strings.TrimSpace(*s.Model)
		if s.Manufacturer != nil {
			sys.Manufacturer = strings.TrimSpace(*s.Manufacturer)
		}
		break
	}
	if sysRaw == nil {
		res.Warnings = append(res.Warnings, "no system document with a Model: the host's model is unknown")
	}
	if ms := t.members(orDefault(root.Managers.ID, "/redfish/v1/Managers"), &res); len(ms) > 0 {
		mgrRaw, _ = t.member(ms[0])
	}
	id := Identity{Manufacturer: sys.Manufacturer, Model: sys.Model}
	if bid, err := bmc.IdentityFromJSON(rootRaw, mgrRaw, sysRaw); err == nil {
		if v, err := bmc.Detect(bid); err == nil {
			id.BMCVendor = v
		}
	}
	res.Inventory.Identity = id

	// Inventory: UpdateService → FirmwareInventory → members.
	fwInv := "/redfish/v1/UpdateService/FirmwareInventory"
	if us, err := t.read(orDefault(root.UpdateService.ID, "/redfish/v1/UpdateService")); err == nil {
		var u struct {
			FirmwareInventory link `json:"FirmwareInventory"`
		}
		if json.Unmarshal(us, &u) == nil && u.FirmwareInventory.ID != "" {
			fwInv = u.FirmwareInventory.ID
		}
	}
	if _, err := t.read(fwInv); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("no firmware inventory at %s: every component is unmatched", fwInv))
		return res, nil
	}
	var missing []string
	for _, m := range t.members(fwInv, &res) {
		raw, ok := t.member(m)
		if !ok {
			missing = append(missing, path.Base(m.ID))
			continue
		}
		e, err := ParseInventoryMember(raw)
		if err != nil {
			return res, InventoryUnreadable.Wrap(err, "firmware inventory member %s", m.ID)
		}
		res.Inventory.Entries = append(res.Inventory.Entries, e)
	}
	if len(missing) > 0 {
		shown := missing
		if len(shown) > 5 {
			shown = append(shown[:5:5], "…")
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d of the members %s lists have no document in the tree and were left out (their version and state are unknown): %s",
			len(missing), fwInv, strings.Join(shown, ", ")))
	}
	return res, nil
}

type link struct {
	ID string `json:"@odata.id"`
}

// collMember is one member of a collection: a link, or the member itself
// when the collection was saved expanded.
type collMember struct {
	ID  string
	raw json.RawMessage
}

type treeReader struct{ fsys fs.FS }

// file maps a resource URI to its index.json in the tree.
func (t treeReader) file(uri string) (string, bool) {
	u := uri
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	u = strings.TrimSuffix(u, "/")
	rest, ok := strings.CutPrefix(u, "/redfish/v1")
	if !ok || (rest != "" && rest[0] != '/') {
		return "", false
	}
	p := path.Clean("." + rest)
	if !fs.ValidPath(p) {
		return "", false
	}
	return path.Join(p, "index.json"), true
}

func (t treeReader) read(uri string) ([]byte, error) {
	f, ok := t.file(uri)
	if !ok {
		return nil, InventoryUnreadable.New("%q is not a /redfish/v1 resource", uri)
	}
	b, err := fs.ReadFile(t.fsys, f)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, InventoryUnreadable.New("%s is not in the saved tree", uri)
		}
		return nil, InventoryUnreadable.Wrap(err, "reading %s", uri)
	}
	return b, nil
}

// members lists a collection's members; a missing or unreadable
// collection is a warning and no members.
func (t treeReader) members(uri string, res *TreeResult) []collMember {
	raw, err := t.read(uri)
	if err != nil {
		return nil
	}
	var c struct {
		Members []json.RawMessage `json:"Members"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("collection %s is not valid JSON: %v", uri, err))
		return nil
	}
	out := make([]collMember, 0, len(c.Members))
	for _, m := range c.Members {
		var l struct {
			ID  string  `json:"@odata.id"`
			Own *string `json:"Id"`
		}
		if json.Unmarshal(m, &l) != nil || l.ID == "" {
			continue
		}
		cm := collMember{ID: l.ID}
		if l.Own != nil {
			cm.raw = m // saved expanded
		}
		out = append(out, cm)
	}
	return out
}

// member returns a member's document, false when the tree lacks it.
func (t treeReader) member(m collMember) ([]byte, bool) {
	if m.raw != nil {
		return m.raw, true
	}
	b, err := t.read(m.ID)
	return b, err == nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ParseInventoryMember reads one FirmwareInventory member document
// (a Redfish SoftwareInventory). Its Id is required, or else the last
// segment of its @odata.id; Version may be absent or null (a number is
// taken as written); Status.State may be absent.
func ParseInventoryMember(raw []byte) (InventoryEntry, error) {
	var m struct {
		ID      *string         `json:"Id"`
		OData   string          `json:"@odata.id"`
		Name    string          `json:"Name"`
		Version json.RawMessage `json:"Version"`
		Status  *struct {
			State *string `json:"State"`
		} `json:"Status"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return InventoryEntry{}, err
	}
	id := ""
	if m.ID != nil {
		id = *m.ID
	}
	if id == "" && m.OData != "" {
		id = path.Base(strings.TrimSuffix(m.OData, "/"))
	}
	if id == "" || id == "." || id == "/" {
		return InventoryEntry{}, errors.New("the member has no Id")
	}
	e := InventoryEntry{ID: id, Name: m.Name}
	if v := strings.TrimSpace(string(m.Version)); v != "" && v != "null" {
		var n json.Number
		if err := json.Unmarshal(m.Version, &e.Version); err != nil {
			if json.Unmarshal(m.Version, &n) != nil {
				return InventoryEntry{}, fmt.Errorf("the member's Version is neither a string nor a number: %s", m.Version)
			}
			e.Version = n.String()
		}
	}
	if m.Status != nil && m.Status.State != nil {
		e.State = *m.Status.State
	}
	return e, nil
}
