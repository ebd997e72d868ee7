package netbox

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/intent"
)

// A device's journal (extras/journal-entries): retirement names its run in
// an entry, and reads the entries back to know what an earlier run did.

// deviceObjectType is a device's assigned_object_type.
const deviceObjectType = "dcim.device"

// wJournal is a journal entry as NetBox renders it.
type wJournal struct {
	ID   int `json:"id"`
	Kind struct {
		Value string `json:"value"`
	} `json:"kind"`
	Comments string  `json:"comments"`
	Created  *string `json:"created"`
}

// JournalEntries lists a device's journal entries, oldest first.
func (c *Client) JournalEntries(ctx context.Context, deviceID int) ([]intent.JournalEntry, error) {
	q := url.Values{"assigned_object_type": {deviceObjectType}, "assigned_object_id": {strconv.Itoa(deviceID)}, "ordering": {"id"}}
	got, err := list[wJournal](ctx, c, "extras/journal-entries/", q)
	if err != nil {
		return nil, fmt.Errorf("netbox: device id %d: reading the journal: %w", deviceID, err)
	}
	out := make([]intent.JournalEntry, 0, len(got))
	for _, j := range got {
		e := intent.JournalEntry{ID: j.ID, Kind: intent.JournalKind(j.Kind.Value), Comments: j.Comments}
		if j.Created != nil {
			e.Created, _ = time.Parse(time.RFC3339Nano, *j.Created)
		}
		out = append(out, e)
	}
	return out, nil
}

// AddJournalEntry writes one journal entry on a device. A POST creates a
// new entry each time, so it is sent once — never retried by the client:
// an answer that does not come back leaves the caller to read the journal
// and see whether the entry is there, instead of a retry writing it twice.
func (c *Client) AddJournalEntry(ctx context.Context, deviceID int, kind intent.JournalKind, comments string) (intent.JournalEntry, error) {
	if !kind.Known() {
		return intent.JournalEntry{}, fmt.Errorf("netbox: device id %d: journal kind %q is not a NetBox choice: %w", deviceID, kind, hostforge.ErrInvalid)
	}
	body := map[string]any{"assigned_object_type": deviceObjectType, "assigned_object_id": deviceID, "kind": string(kind), "comments": comments}
	var w wJournal
	if err := c.secrets.Err(c.postOnce(ctx, "extras/journal-entries/", body, &w)); err != nil {
		return intent.JournalEntry{}, fmt.Errorf("netbox: device id %d: writing a journal entry: %w", deviceID, err)
	}
	e := intent.JournalEntry{ID: w.ID, Kind: intent.JournalKind(w.Kind.Value), Comments: w.Comments}
	if w.Created != nil {
		e.Created, _ = time.Parse(time.RFC3339Nano, *w.Created)
	}
	return e, nil
}

// postOnce is one POST through the client's HTTP client and transport,
// without the retrying layer, mapped to the same errors as every call.
func (c *Client) postOnce(ctx context.Context, path string, body, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("netbox: encoding POST %s: %w", path, hostforge.ErrInvalid)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base.String()+"/api/"+path, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("netbox: building POST %s: %v: %w", path, err, hostforge.ErrInvalid)
	}
	req.Header.Set("Authorization", "Token "+c.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.HTTPClient.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("netbox: POST %s: %w", path, ctxErr)
		}
		var certErr *tls.CertificateVerificationError
		var unknownAuth x509.UnknownAuthorityError
		var hostErr x509.HostnameError
		if errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr) {
			return TLSUntrusted.Wrap(err, "netbox %s: certificate not trusted", c.base.Host)
		}
		return fmt.Errorf("netbox: POST %s: %v: the entry may or may not be written: %w", path, err, hostforge.ErrUnavailable)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("netbox: POST %s: reading the answer: %v: %w", path, err, hostforge.ErrUnavailable)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &apiError{method: http.MethodPost, path: path, status: resp.StatusCode, detail: c.secrets.Scrub(errorDetail(data))}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &decodeError{path: path, err: err}
	}
	return nil
}
