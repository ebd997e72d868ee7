package bmc

import (
	"encoding/json"
	"fmt"
	"sort"
)

// IdentityFromJSON builds an Identity from the raw service root and,
// optionally (nil), the first manager and first system documents.
func IdentityFromJSON(root, manager, system []byte) (Identity, error) {
	var id Identity
	var r struct {
		Vendor  string                     `json:"Vendor"`
		Product *string                    `json:"Product"`
		Oem     map[string]json.RawMessage `json:"Oem"`
	}
	if err := json.Unmarshal(root, &r); err != nil {
		return id, fmt.Errorf("service root: %w", err)
	}
	id.Vendor = r.Vendor
	if r.Product != nil {
		id.Product = *r.Product
	}
	id.RootOem = oemKeys(r.Oem)
	if manager != nil {
		var m struct {
			Model string                     `json:"Model"`
			Oem   map[string]json.RawMessage `json:"Oem"`
		}
		if err := json.Unmarshal(manager, &m); err != nil {
			return id, fmt.Errorf("manager: %w", err)
		}
		id.ManagerModel, id.ManagerOem = m.Model, oemKeys(m.Oem)
	}
	if system != nil {
		var s struct {
			Manufacturer string `json:"Manufacturer"`
		}
		if err := json.Unmarshal(system, &s); err != nil {
			return id, fmt.Errorf("system: %w", err)
		}
		id.SystemManufacturer = s.Manufacturer
	}
	return id, nil
}

func oemKeys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		if k != "" && k[0] != '@' {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
