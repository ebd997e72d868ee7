package netbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hostforge/hostforge"
)

// related is what a device's and its interfaces' REST answers point at
// without carrying: NetBox renders related objects in their brief form,
// which has no custom fields, no LAG parent and no role.
type related struct {
	typeFields, roleFields map[string]any
	// peerLAG is a peer interface's LAG parent by its id; peerRole a peer
	// device's role slug by its id.
	peerLAG  map[int]string
	peerRole map[int]string
}

// related reads them in one GraphQL query when NetBox serves its GraphQL
// API, else in up to four REST requests (the device type, the role, the
// peer interfaces, the peer devices).
func (c *Client) related(ctx context.Context, name string, d wDevice, refs peerRefs) (related, error) {
	if !c.noGraphQL.Load() {
		rel, err := c.relatedGraphQL(ctx, name, d, refs)
		var off *graphQLRefused
		if !errors.As(err, &off) {
			return rel, err
		}
		if off.permanent {
			c.noGraphQL.Store(true)
		}
		c.log.Warn("netbox: the GraphQL query was refused; reading over REST", "device", name, "reason", off.reason, "for_good", off.permanent)
	}
	return c.relatedREST(ctx, name, d, refs)
}

// graphQLRefused is NetBox declining the query rather than failing: no
// GraphQL API (404, GRAPHQL_ENABLED off), or a schema that does not take
// the query (permanent), or an error in answering it (this call only).
type graphQLRefused struct {
	reason    string
	permanent bool
}

func (e *graphQLRefused) Error() string { return "GraphQL refused: " + e.reason }

// gqlID reads a GraphQL ID: a string of digits (as NetBox renders it) or a
// number.
type gqlID int

func (g *gqlID) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("id %q is not a number", s)
		}
		*g = gqlID(n)
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("id %s is neither a string nor a number", b)
	}
	*g = gqlID(n)
	return nil
}

type gqlCustomFields struct {
	CustomFields map[string]any `json:"custom_fields"`
}

type gqlPeerDevice struct {
	ID   gqlID `json:"id"`
	Role *struct {
		Slug string `json:"slug"`
	} `json:"role"`
}

// gqlAnswer is the answer to relatedQuery.
type gqlAnswer struct {
	Data *struct {
		Device *struct {
			Role       *gqlCustomFields `json:"role"`
			DeviceType *gqlCustomFields `json:"device_type"`
			Interfaces []struct {
				LinkPeers []struct {
					Typename string `json:"__typename"`
					ID       gqlID  `json:"id"`
					LAG      *struct {
						Name string `json:"name"`
					} `json:"lag"`
					Device *gqlPeerDevice `json:"device"`
				} `json:"link_peers"`
			} `json:"interfaces"`
		} `json:"device"`
	} `json:"data"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

// relatedQuery is the GraphQL query for a device: only single-object
// queries by id and fields every NetBox 4.x schema has, no aliases (NetBox
// allows ten), no filters (their syntax changed in 4.3). The interfaces'
// link peers are asked for only when some interface is cabled.
func relatedQuery(deviceID int, cabled bool) string {
	peers := ""
	if cabled {
		peers = " interfaces { link_peers { __typename" +
			" ... on InterfaceType { id lag { name } device { id role { slug } } }" +
			" ... on FrontPortType { device { id role { slug } } } } }"
	}
	return fmt.Sprintf("query { device(id: %d) { role { custom_fields } device_type { custom_fields }%s } }", deviceID, peers)
}

func (c *Client) relatedGraphQL(ctx context.Context, name string, d wDevice, refs peerRefs) (related, error) {
	var ans gqlAnswer
	err := c.do(ctx, http.MethodPost, "/graphql/", map[string]string{"query": relatedQuery(d.ID, refs.cabled())}, &ans)
	var ae *apiError
	switch {
	case errors.As(err, &ae) && (ae.status == http.StatusNotFound || ae.status == http.StatusBadRequest):
		return related{}, &graphQLRefused{reason: fmt.Sprintf("HTTP %d: %s", ae.status, ae.detail), permanent: true}
	case err != nil:
		return related{}, shapeErr(name, "role, device type and cable peers (GraphQL)", err)
	}
	if len(ans.Errors) > 0 {
		msgs := make([]string, 0, len(ans.Errors))
		gone, schema := false, false
		for _, e := range ans.Errors {
			msgs = append(msgs, c.secrets.Scrub(e.Message))
			gone = gone || strings.Contains(e.Message, "matching query does not exist")
			schema = schema || strings.HasPrefix(e.Message, "Cannot query field") || strings.HasPrefix(e.Message, "Unknown type")
		}
		if gone {
			return related{}, fmt.Errorf("netbox: device %q: gone while it was read: %s: %w", name, strings.Join(msgs, "; "), hostforge.ErrNotFound)
		}
		return related{}, &graphQLRefused{reason: strings.Join(msgs, "; "), permanent: schema}
	}
	if ans.Data == nil || ans.Data.Device == nil {
		return related{}, invalid(name, "graphql.data.device", "missing from NetBox's answer")
	}
	dev := ans.Data.Device
	if dev.Role == nil || dev.DeviceType == nil {
		return related{}, invalid(name, "graphql.data.device", "no role or device type")
	}
	rel := related{typeFields: dev.DeviceType.CustomFields, roleFields: dev.Role.CustomFields,
		peerLAG: map[int]string{}, peerRole: map[int]string{}}
	for _, i := range dev.Interfaces {
		for _, p := range i.LinkPeers {
			if p.Typename == "InterfaceType" && p.LAG != nil {
				rel.peerLAG[int(p.ID)] = p.LAG.Name
			}
			if p.Device != nil && p.Device.Role != nil {
				rel.peerRole[int(p.Device.ID)] = p.Device.Role.Slug
			}
		}
	}
	return rel, nil
}

// relatedREST reads the same over REST: the device type and the role by
// id, the peer interfaces and the peer devices by id lists (skipped when
// nothing is cabled).
func (c *Client) relatedREST(ctx context.Context, name string, d wDevice, refs peerRefs) (related, error) {
	rel := related{peerLAG: map[int]string{}, peerRole: map[int]string{}}
	var dt wDeviceType
	if err := c.do(ctx, http.MethodGet, fmt.Sprintf("dcim/device-types/%d/", d.DeviceType.ID), nil, &dt); err != nil {
		return rel, shapeErr(name, "device_type", err)
	}
	var role wRole
	if err := c.do(ctx, http.MethodGet, fmt.Sprintf("dcim/device-roles/%d/", d.Role.ID), nil, &role); err != nil {
		return rel, shapeErr(name, "role", err)
	}
	rel.typeFields, rel.roleFields = dt.CustomFields, role.CustomFields
	if len(refs.ifIDs) > 0 {
		got, err := listByID[wInterface](ctx, c, "dcim/interfaces/", refs.ifIDs, nil)
		if err != nil {
			return rel, shapeErr(name, "cable peer interfaces", err)
		}
		for _, pi := range got {
			if pi.LAG != nil {
				rel.peerLAG[pi.ID] = pi.LAG.Name
			}
		}
	}
	if len(refs.deviceIDs) > 0 {
		got, err := listByID[wDevice](ctx, c, "dcim/devices/", refs.deviceIDs, url.Values{"exclude": {"config_context"}})
		if err != nil {
			return rel, shapeErr(name, "cable peer devices", err)
		}
		for _, pd := range got {
			if pd.Role != nil {
				rel.peerRole[pd.ID] = pd.Role.Slug
			}
		}
	}
	return rel, nil
}
