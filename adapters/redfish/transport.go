package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

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
	api *gofish.APIClient
	// endpoint is the BMC's base URL: every request stays on its origin.
	endpoint *url.URL
	// secrets holds the credentials this connection sends; the BMC's text
	// is scrubbed of them.
	secrets *hostforge.Secrets
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
// keeping the BMC's own message scrubbed of every secret in sec. ctx is the
// caller's: only when it has ended is the error a context error (the
// runtime reports CANCELLED). The HTTP client's own timeout also matches
// context.DeadlineExceeded, but means the BMC did not answer in time:
// ErrUnavailable, retryable, with no context error in the chain.
func convert(ctx context.Context, sec *hostforge.Secrets, err error) error {
	if err == nil {
		return nil
	}
	if u := Untrusted("the BMC", err); u != nil {
		return u
	}
	var se *schemas.Error
	if errors.As(err, &se) {
		msg := se.Message
		if len(se.ExtendedInfos) > 0 && se.ExtendedInfos[0].Message != "" {
			msg = se.ExtendedInfos[0].Message
		}
		return bmc.HTTPError(se.HTTPReturnedStatusCode, sec.Scrub(msg))
	}
	text := sec.Scrub(err.Error())
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("redfish: %s: %w", text, ctxErr)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("redfish: no answer within the client's timeout: %s: %w", text, hostforge.ErrUnavailable)
	}
	return fmt.Errorf("redfish: %s: %w", text, hostforge.ErrUnavailable)
}

// follow checks that p is a path on the BMC's own service before a request
// goes there.
func (c *client) follow(p string) error { return c.followChecked(p, CheckLink) }

// followChecked is follow with the path check given.
func (c *client) followChecked(p string, check func(string) error) error {
	if err := check(p); err != nil {
		return bmc.LinkOffOrigin.New("%s answered the link %q: %v; refused, nothing was sent there", c.endpoint.Host, c.secrets.Scrub(p), err)
	}
	u, err := url.Parse(c.endpoint.String() + p)
	if err != nil || u.Scheme != c.endpoint.Scheme || u.Host != c.endpoint.Host || u.User != nil {
		return bmc.LinkOffOrigin.New("%s answered the link %q, which leaves its origin; refused, nothing was sent there", c.endpoint.Host, c.secrets.Scrub(p))
	}
	return nil
}

func (c *client) get(ctx context.Context, p string) (doc, error) {
	d, _, err := c.getDated(ctx, p)
	return d, err
}

// getDated is get that also returns the BMC's clock: the response's HTTP
// Date (zero when absent or malformed).
func (c *client) getDated(ctx context.Context, p string) (doc, time.Time, error) {
	if err := c.follow(p); err != nil {
		return nil, time.Time{}, err
	}
	resp, err := c.api.WithContext(ctx).Get(p)
	if err != nil {
		return nil, time.Time{}, convert(ctx, c.secrets, err)
	}
	defer resp.Body.Close()
	var d doc
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&d); err != nil {
		return nil, time.Time{}, fmt.Errorf("redfish: GET %s: %s: %w", p, c.secrets.Scrub(err.Error()), hostforge.ErrInvalid)
	}
	var now time.Time
	if h := resp.Header.Get("Date"); h != "" {
		if t, err := http.ParseTime(h); err == nil {
			now = t
		}
	}
	return d, now, nil
}

// write sends a PATCH or POST and returns the Location header.
func (c *client) write(ctx context.Context, method, p string, body any) (string, error) {
	if err := c.follow(p); err != nil {
		return "", err
	}
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
		return "", convert(ctx, c.secrets, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.Header.Get("Location"), nil
}
