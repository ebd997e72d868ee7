package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
)

// The transport: one authenticated connection, its requests, and the
// conversion of gofish and transport errors into hostforge's vocabulary.

type doc = map[string]any

// client is one authenticated connection. Resource paths are discovered
// from the service root and cached, with the root and manager resources
// (navigation only); a client serves one attempt of the BMC phase.
type client struct {
	api     *gofish.APIClient
	mgr     string
	sys     string
	vendor  bmc.Vendor
	rootDoc doc
	mgrDoc  doc
	// path maps "account <id>" and "boot option <ref>" to the member's
	// resource, from this client's last listing.
	path map[string]string
}

// convert turns gofish and transport errors into hostforge's vocabulary,
// keeping the BMC's own message.
func convert(err error) error {
	if err == nil {
		return nil
	}
	var se *schemas.Error
	if errors.As(err, &se) {
		msg := se.Message
		if len(se.ExtendedInfos) > 0 && se.ExtendedInfos[0].Message != "" {
			msg = se.ExtendedInfos[0].Message
		}
		return bmc.HTTPError(se.HTTPReturnedStatusCode, msg)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("redfish: %w: %w", hostforge.ErrUnavailable, err)
	}
	return fmt.Errorf("redfish: %v: %w", err, hostforge.ErrUnavailable)
}

func (c *client) get(ctx context.Context, p string) (doc, error) {
	resp, err := c.api.WithContext(ctx).Get(p)
	if err != nil {
		return nil, convert(err)
	}
	defer resp.Body.Close()
	var d doc
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&d); err != nil {
		return nil, fmt.Errorf("redfish: GET %s: %v: %w", p, err, hostforge.ErrInvalid)
	}
	return d, nil
}

// write sends a PATCH or POST and returns the Location header.
func (c *client) write(ctx context.Context, method, p string, body any) (string, error) {
	api := c.api.WithContext(ctx)
	var resp *http.Response
	var err error
	switch method {
	case http.MethodPatch:
		resp, err = api.Patch(p, body)
	case http.MethodPost:
		resp, err = api.Post(p, body)
	case http.MethodDelete:
		resp, err = api.Delete(p)
	}
	if err != nil {
		return "", convert(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.Header.Get("Location"), nil
}
