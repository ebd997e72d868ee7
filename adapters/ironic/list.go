package ironic

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/hostforge/hostforge/ironic"
)

// ListPageSize is how many nodes one list request asks for.
const ListPageSize = 500

// ListNodes lists every node of the Ironic instance, page by page (limit
// and marker), with the fields the fleet manager's projection reads: UUID,
// name, provision state, instance UUID and maintenance. It implements
// enrollment.NodeLister.
func (c *Client) ListNodes(ctx context.Context) ([]ironic.Node, error) {
	var out []ironic.Node
	marker := ""
	for {
		q := url.Values{
			"fields": {"uuid,name,provision_state,instance_uuid,maintenance"},
			"limit":  {strconv.Itoa(ListPageSize)},
		}
		if marker != "" {
			q.Set("marker", marker)
		}
		var body struct {
			Nodes []json.RawMessage `json:"nodes"`
			Next  string            `json:"next"`
		}
		if _, err := c.sc.Get(ctx, c.url("nodes")+"?"+q.Encode(), &body, ok(200)); err != nil {
			return nil, mapErr(ctx, err, "list nodes")
		}
		for _, b := range body.Nodes {
			n, err := decodeNode(b)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		if body.Next == "" || len(body.Nodes) == 0 {
			return out, nil
		}
		marker = out[len(out)-1].UUID
	}
}
