package netboxhttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// NetBox's GraphQL API (Strawberry, API v1, the default through 4.5) as
// far as the emulator models it: POST /graphql/ {"query": ...}; the single
// object queries device, device_type, device_role and interface, each by
// (id: N); the object types below with the fields listed; link_peers as
// the LinkPeerType union (InterfaceType, FrontPortType,
// CircuitTerminationType), read through inline fragments; ids rendered as
// strings (GraphQL's ID); custom_fields and config_context as JSON.
//
// Like NetBox: a query naming a field a type does not have is refused
// before anything runs ({"data": null, "errors": [{"message": "Cannot
// query field 'x' on type 'DeviceType'.", ...}]}, HTTP 200); an id that
// does not exist is "Device matching query does not exist." with the
// field's path; more than GraphQLMaxAliases aliases in a document is
// refused ("N aliases found. Allowed: 10", NetBox's GRAPHQL_MAX_ALIASES).

// GraphQLMaxAliases is NetBox's default GRAPHQL_MAX_ALIASES.
const GraphQLMaxAliases = 10

// gqlField describes one field of an object type: the type it returns
// (an object type, a union, or "" for a leaf) and whether it is a list.
type gqlField struct {
	typ  string
	list bool
}

// gqlSchema is the modelled part of NetBox's schema. Leaves are ID,
// String, Boolean and JSON fields.
var gqlSchema = map[string]map[string]gqlField{
	"Query": {
		"device": {typ: "DeviceType"}, "device_type": {typ: "DeviceTypeType"},
		"device_role": {typ: "DeviceRoleType"}, "interface": {typ: "InterfaceType"},
	},
	"DeviceType": {
		"id": {}, "name": {}, "serial": {}, "custom_fields": {}, "config_context": {},
		"role": {typ: "DeviceRoleType"}, "device_type": {typ: "DeviceTypeType"}, "site": {typ: "SiteType"},
		"tags": {typ: "TagType", list: true}, "interfaces": {typ: "InterfaceType", list: true},
	},
	"DeviceRoleType":   {"id": {}, "name": {}, "slug": {}, "custom_fields": {}},
	"DeviceTypeType":   {"id": {}, "model": {}, "slug": {}, "custom_fields": {}, "manufacturer": {typ: "ManufacturerType"}},
	"ManufacturerType": {"id": {}, "name": {}, "slug": {}},
	"SiteType":         {"id": {}, "name": {}, "slug": {}},
	"TagType":          {"id": {}, "name": {}, "slug": {}},
	"InterfaceType": {
		"id": {}, "name": {}, "enabled": {}, "mgmt_only": {}, "custom_fields": {},
		"device": {typ: "DeviceType"}, "lag": {typ: "InterfaceType"}, "cable": {typ: "CableType"},
		"link_peers": {typ: "LinkPeerType", list: true},
	},
	"FrontPortType":          {"id": {}, "name": {}, "device": {typ: "DeviceType"}, "cable": {typ: "CableType"}},
	"CircuitTerminationType": {"id": {}, "cable": {typ: "CableType"}},
	"CableType":              {"id": {}, "label": {}},
}

// gqlUnions are the union types and their members.
var gqlUnions = map[string][]string{"LinkPeerType": {"InterfaceType", "FrontPortType", "CircuitTerminationType"}}

// gqlModel names the Django model of a single-object query, for NetBox's
// not-found message.
var gqlModel = map[string]string{"device": "Device", "device_type": "DeviceType", "device_role": "DeviceRole", "interface": "Interface"}

// gqlError is one entry of a response's errors.
type gqlError struct {
	Message   string   `json:"message"`
	Locations []gqlLoc `json:"locations,omitempty"`
	Path      []any    `json:"path,omitempty"`
}

type gqlLoc struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

func errAt(pos gqlPos, format string, args ...any) gqlError {
	return gqlError{Message: fmt.Sprintf(format, args...), Locations: []gqlLoc{{pos.line, pos.col}}}
}

// validate checks a selection set against the schema for the static type
// typ, as GraphQL validation does before executing anything.
func validate(typ string, sel []gqlSel, errs *[]gqlError) {
	members, isUnion := gqlUnions[typ]
	for _, s := range sel {
		if s.on != "" {
			ok := s.on == typ
			for _, m := range members {
				ok = ok || s.on == m
			}
			if _, known := gqlSchema[s.on]; !known && !ok {
				*errs = append(*errs, errAt(s.pos, "Unknown type '%s'.", s.on))
				continue
			}
			if !ok {
				*errs = append(*errs, errAt(s.pos, "Fragment cannot be spread here as objects of type '%s' can never be of type '%s'.", typ, s.on))
				continue
			}
			validate(s.on, s.sel, errs)
			continue
		}
		if s.name == "__typename" {
			if len(s.sel) > 0 {
				*errs = append(*errs, errAt(s.pos, "Field '__typename' must not have a selection since type 'String!' has no subfields."))
			}
			continue
		}
		f, ok := gqlSchema[typ][s.name]
		if isUnion || !ok {
			*errs = append(*errs, errAt(s.pos, "Cannot query field '%s' on type '%s'.", s.name, typ))
			continue
		}
		if typ == "Query" {
			id, ok := s.args["id"]
			_, isInt := id.(int64)
			_, isStr := id.(string)
			if !ok || !isInt && !isStr || len(s.args) != 1 {
				*errs = append(*errs, errAt(s.pos, "Field '%s' argument 'id' of type 'ID!' is required, and the only argument the emulator takes.", s.name))
				continue
			}
		} else if len(s.args) > 0 {
			*errs = append(*errs, errAt(s.pos, "arguments on '%s.%s' are not modelled by the emulator.", typ, s.name))
			continue
		}
		switch {
		case f.typ == "" && len(s.sel) > 0:
			*errs = append(*errs, errAt(s.pos, "Field '%s' must not have a selection since it is a leaf.", s.name))
		case f.typ != "" && len(s.sel) == 0:
			*errs = append(*errs, errAt(s.pos, "Field '%s' of type '%s' must have a selection of subfields. Did you mean '%s { ... }'?", s.name, f.typ, s.name))
		case f.typ != "":
			validate(f.typ, s.sel, errs)
		}
	}
}

func countAliases(sel []gqlSel) int {
	n := 0
	for _, s := range sel {
		if s.on == "" && s.alias != s.name {
			n++
		}
		n += countAliases(s.sel)
	}
	return n
}

// gqlObj is one object as the executor resolves it: its concrete type and
// the fake's record.
type gqlObj struct {
	typ string
	v   any
}

// orderedObject is a response object whose keys keep the query's order.
type orderedObject struct {
	keys []string
	vals map[string]any
}

func (o *orderedObject) set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, dup := o.vals[k]; !dup {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// executor resolves a validated query over the fake's state.
type executor struct {
	st   *fakes.NetBoxState
	errs []gqlError
}

func gqlID(id int) string { return strconv.Itoa(id) }

// field resolves one field of an object to its value (an object, a list of
// objects, a leaf), or nil.
func (e *executor) field(o gqlObj, name string) any {
	st := e.st
	switch v := o.v.(type) {
	case *fakes.NBDevice:
		switch name {
		case "id":
			return gqlID(v.ID)
		case "name":
			return v.Name
		case "serial":
			return v.Serial
		case "custom_fields":
			return customFields(v.CustomFields)
		case "config_context":
			if v.ConfigContext == nil {
				return map[string]any{}
			}
			return copyJSON(v.ConfigContext)
		case "role":
			return obj("DeviceRoleType", st.Roles[v.RoleID])
		case "device_type":
			return obj("DeviceTypeType", st.DeviceTypes[v.DeviceTypeID])
		case "site":
			return obj("SiteType", st.Sites[v.SiteID])
		case "tags":
			var out []gqlObj
			for _, id := range v.TagIDs {
				if t := st.Tags[id]; t != nil {
					out = append(out, gqlObj{"TagType", t})
				}
			}
			sort.Slice(out, func(i, j int) bool { return out[i].v.(*fakes.NBTag).Name < out[j].v.(*fakes.NBTag).Name })
			return out
		case "interfaces":
			var ifs []*fakes.NBInterface
			for _, i := range st.Interfaces {
				if i.DeviceID == v.ID {
					ifs = append(ifs, i)
				}
			}
			sort.Slice(ifs, func(a, b int) bool {
				if ifs[a].Name != ifs[b].Name {
					return intent.NaturalLess(ifs[a].Name, ifs[b].Name)
				}
				return ifs[a].ID < ifs[b].ID
			})
			out := make([]gqlObj, 0, len(ifs))
			for _, i := range ifs {
				out = append(out, gqlObj{"InterfaceType", i})
			}
			return out
		}
	case *fakes.NBRole:
		switch name {
		case "id":
			return gqlID(v.ID)
		case "name":
			return v.Name
		case "slug":
			return v.Slug
		case "custom_fields":
			return customFields(v.CustomFields)
		}
	case *fakes.NBDeviceType:
		switch name {
		case "id":
			return gqlID(v.ID)
		case "model":
			return v.Model
		case "slug":
			return v.Slug
		case "custom_fields":
			return customFields(v.CustomFields)
		case "manufacturer":
			return obj("ManufacturerType", st.Manufacturers[v.ManufacturerID])
		}
	case *fakes.NBManufacturer:
		return nameSlug(name, v.ID, v.Name, v.Slug)
	case *fakes.NBSite:
		return nameSlug(name, v.ID, v.Name, v.Slug)
	case *fakes.NBTag:
		return nameSlug(name, v.ID, v.Name, v.Slug)
	case *fakes.NBInterface:
		switch name {
		case "id":
			return gqlID(v.ID)
		case "name":
			return v.Name
		case "enabled":
			return v.Enabled
		case "mgmt_only":
			return v.MgmtOnly
		case "custom_fields":
			return map[string]any{}
		case "device":
			return obj("DeviceType", st.Devices[v.DeviceID])
		case "lag":
			if v.LAGID == 0 {
				return nil
			}
			return obj("InterfaceType", st.Interfaces[v.LAGID])
		case "cable":
			return obj("CableType", st.Cables[v.CableID])
		case "link_peers":
			out := []gqlObj{}
			c := st.Cables[v.CableID]
			if c == nil || v.CableID == 0 {
				return out
			}
			far := c.A
			for _, t := range c.A {
				if t.ObjectType == intent.PeerKindInterface && t.ObjectID == v.ID {
					far = c.B
				}
			}
			for _, t := range far {
				out = append(out, e.termination(c, t))
			}
			return out
		}
	case termination:
		switch name {
		case "id":
			return gqlID(v.t.ObjectID)
		case "name":
			return v.t.Name
		case "device":
			return obj("DeviceType", st.Devices[v.t.DeviceID])
		case "cable":
			return obj("CableType", v.cable)
		}
	case *fakes.NBCable:
		switch name {
		case "id":
			return gqlID(v.ID)
		case "label":
			return ""
		}
	}
	return nil
}

// termination is a cable end the fake keeps without an object of its own
// (a front port, a circuit termination).
type termination struct {
	t     fakes.NBTermination
	cable *fakes.NBCable
}

func (e *executor) termination(c *fakes.NBCable, t fakes.NBTermination) gqlObj {
	if t.ObjectType == intent.PeerKindInterface {
		if i := e.st.Interfaces[t.ObjectID]; i != nil {
			return gqlObj{"InterfaceType", i}
		}
	}
	typ := "FrontPortType"
	if strings.HasPrefix(t.ObjectType, "circuits.") {
		typ = "CircuitTerminationType"
	}
	return gqlObj{typ, termination{t: t, cable: c}}
}

func nameSlug(name string, id int, n, slug string) any {
	switch name {
	case "id":
		return gqlID(id)
	case "name":
		return n
	case "slug":
		return slug
	}
	return nil
}

// obj wraps a record as an object of typ, or nil when there is none (a
// typed nil pointer included).
func obj[T any](typ string, v *T) any {
	if v == nil {
		return nil
	}
	return gqlObj{typ, v}
}

// resolve renders an object's selection set.
func (e *executor) resolve(o gqlObj, sel []gqlSel) *orderedObject {
	out := &orderedObject{}
	for _, s := range sel {
		if s.on != "" {
			if s.on == o.typ {
				sub := e.resolve(o, s.sel)
				for _, k := range sub.keys {
					out.set(k, sub.vals[k])
				}
			}
			continue
		}
		if s.name == "__typename" {
			out.set(s.alias, o.typ)
			continue
		}
		out.set(s.alias, e.value(e.field(o, s.name), s.sel))
	}
	return out
}

func (e *executor) value(v any, sel []gqlSel) any {
	switch x := v.(type) {
	case gqlObj:
		return e.resolve(x, sel)
	case []gqlObj:
		out := make([]any, 0, len(x))
		for _, o := range x {
			out = append(out, e.resolve(o, sel))
		}
		return out
	}
	return v
}

// query runs the top-level fields: each a single object by id.
func (e *executor) query(sel []gqlSel) *orderedObject {
	data := &orderedObject{}
	for _, s := range sel {
		if s.name == "__typename" {
			data.set(s.alias, "Query")
			continue
		}
		id, err := argID(s.args["id"])
		var o any
		if err == nil {
			switch s.name {
			case "device":
				o = obj("DeviceType", e.st.Devices[id])
			case "device_type":
				o = obj("DeviceTypeType", e.st.DeviceTypes[id])
			case "device_role":
				o = obj("DeviceRoleType", e.st.Roles[id])
			case "interface":
				o = obj("InterfaceType", e.st.Interfaces[id])
			}
		}
		if o == nil {
			// The fields are non-null: the error nulls the whole data.
			e.errs = append(e.errs, gqlError{Message: gqlModel[s.name] + " matching query does not exist.",
				Locations: []gqlLoc{{s.pos.line, s.pos.col}}, Path: []any{s.alias}})
			continue
		}
		data.set(s.alias, e.value(o, s.sel))
	}
	if len(e.errs) > 0 {
		return nil
	}
	return data
}

// argID reads an ID argument: an integer literal or a string of digits.
func argID(v any) (int, error) {
	switch x := v.(type) {
	case int64:
		return int(x), nil
	case string:
		return strconv.Atoi(x)
	}
	return 0, fmt.Errorf("not an ID")
}

// graphql serves POST /graphql/.
func (s *Server) graphql(w http.ResponseWriter, r *http.Request) {
	if s.opts.NoGraphQL {
		http.Error(w, "The GraphQL API is not enabled.", http.StatusNotFound)
		return
	}
	var body struct {
		Query string `json:"query"`
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || json.Unmarshal(raw, &body) != nil {
		http.Error(w, "Unable to parse request body as JSON", http.StatusBadRequest)
		return
	}
	if strings.TrimSpace(body.Query) == "" {
		http.Error(w, "No GraphQL query found in the request", http.StatusBadRequest)
		return
	}
	if !s.enter(w, r, "device", false) {
		return
	}
	answer := func(data any, errs []gqlError) {
		resp := map[string]any{"data": data}
		if len(errs) > 0 {
			resp["errors"] = errs
		}
		writeJSON(w, http.StatusOK, resp)
	}
	sel, err := parseQuery(body.Query)
	if err != nil {
		se := err.(*gqlSyntaxError)
		answer(nil, []gqlError{errAt(se.pos, "%s", se.Error())})
		return
	}
	var errs []gqlError
	if n := countAliases(sel); n > GraphQLMaxAliases {
		errs = append(errs, gqlError{Message: fmt.Sprintf("%d aliases found. Allowed: %d", n, GraphQLMaxAliases)})
	}
	validate("Query", sel, &errs)
	if len(errs) > 0 {
		answer(nil, errs)
		return
	}
	var data *orderedObject
	var execErrs []gqlError
	s.nb.View(func(st *fakes.NetBoxState) {
		e := &executor{st: st}
		data = e.query(sel)
		execErrs = e.errs
	})
	if data == nil {
		answer(nil, execErrs)
		return
	}
	answer(data, nil)
}
