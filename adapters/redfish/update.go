package redfish

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/firmware"
)

// Firmware is firmware.BMCClient over Redfish: the firmware inventory
// (UpdateService.FirmwareInventory), the multipart push to the
// UpdateService's MultipartHttpPushUri (SimpleUpdate where a BMC lacks
// it), its task (TaskService), the power and BMC resets of activation,
// and Dell's system lockdown. Each call connects anew through Connector
// (TLS verified as its TLSFor says) with the machine's BMC address and
// credential from Locate.
type Firmware struct {
	// Connector connects to BMCs; its Timeout bounds each read and action.
	Connector *Connector
	// Locate returns the address (host[:port]) of the machine's BMC and
	// the credential to log in with.
	Locate func(ctx context.Context, machine string) (address string, cred bmc.Credential, err error)
	// UploadTimeout bounds one push, body included (default
	// firmware.UploadDeadline, which the upload step's attempt bound
	// assumes).
	UploadTimeout time.Duration
	Log           *slog.Logger
}

var _ firmware.BMCClient = (*Firmware)(nil)

func (f *Firmware) log() *slog.Logger {
	if f.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Log
}

// classify turns an error into the update's vocabulary: unavailable and
// not-found answers are transient (FIRMWARE_BMC_UNREACHABLE), refusals
// and missing features are not (FIRMWARE_BMC_REFUSED).
func classify(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, bmc.ErrUnsupported) && !hostforge.Settled(err) {
		return firmware.BMCRefused.At("firmware_update").Wrap(err, format, args...)
	}
	return firmware.BMCErrors.Classify(err, "firmware_update", format, args...)
}

func (f *Firmware) connect(ctx context.Context, machine string, upload bool) (*client, error) {
	if f.Locate == nil || f.Connector == nil {
		return nil, firmware.BMCRefused.New("machine %s: no BMC locator or connector is configured", machine)
	}
	addr, cred, err := f.Locate(ctx, machine)
	if err != nil {
		return nil, err
	}
	var timeout time.Duration
	if upload {
		timeout = f.UploadTimeout
		if timeout <= 0 {
			timeout = firmware.UploadDeadline
		}
	}
	cl, err := f.Connector.connect(ctx, addr, cred, timeout)
	if err != nil {
		return nil, classify(err, "connecting to the BMC of %s at %s", machine, addr)
	}
	return cl, nil
}

// close drops the connection's idle connections: a firmware call connects
// anew every time, so nothing would reuse them.
func (c *client) close() {
	if c.api != nil && c.api.HTTPClient != nil {
		c.api.HTTPClient.CloseIdleConnections()
	}
}

// updateService is the UpdateService resource (from the service root).
func (c *client) updateService(ctx context.Context) (string, doc, error) {
	root, err := c.root(ctx)
	if err != nil {
		return "", nil, err
	}
	p := link(root, "UpdateService")
	if p == "" {
		p = "/redfish/v1/UpdateService"
	}
	d, err := c.get(ctx, p)
	if err != nil {
		return "", nil, err
	}
	return p, d, nil
}

func (c *client) firmwareInventory(ctx context.Context) (string, error) {
	_, us, err := c.updateService(ctx)
	if err != nil {
		return "", err
	}
	if p := link(us, "FirmwareInventory"); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("redfish: the UpdateService has no FirmwareInventory: %w", bmc.ErrUnsupported)
}

// Inventory reads the system's identity and the firmware inventory, every
// member fresh. A member the collection lists that answers 404 is left
// out; any other failed read fails the call (a partial inventory would
// read as drift).
func (f *Firmware) Inventory(ctx context.Context, machine string) (firmware.Inventory, error) {
	c, err := f.connect(ctx, machine, false)
	if err != nil {
		return firmware.Inventory{}, err
	}
	defer c.close()
	inv, err := c.inventory(ctx)
	return inv, classify(err, "reading the firmware inventory of %s", machine)
}

func (c *client) inventory(ctx context.Context) (firmware.Inventory, error) {
	var inv firmware.Inventory
	root, err := c.root(ctx)
	if err != nil {
		return inv, err
	}
	sys, err := c.system(ctx)
	if err != nil {
		return inv, err
	}
	mgr, err := c.manager(ctx)
	if err != nil {
		return inv, err
	}
	inv.Identity = firmware.Identity{Manufacturer: strings.TrimSpace(str(sys, "Manufacturer")), Model: strings.TrimSpace(str(sys, "Model"))}
	enc := func(d doc) []byte { b, _ := json.Marshal(d); return b }
	if id, err := bmc.IdentityFromJSON(enc(root), enc(mgr), enc(sys)); err == nil {
		if v, err := bmc.Detect(id); err == nil {
			inv.Identity.BMCVendor = v
		}
	}
	coll, err := c.firmwareInventory(ctx)
	if err != nil {
		return inv, err
	}
	d, err := c.get(ctx, coll)
	if err != nil {
		return inv, err
	}
	for _, m := range members(d) {
		md, err := c.get(ctx, m)
		if errors.Is(err, hostforge.ErrNotFound) {
			continue
		}
		if err != nil {
			return inv, err
		}
		e, err := firmware.ParseInventoryMember(enc(md))
		if err != nil {
			return inv, fmt.Errorf("redfish: firmware inventory member %s: %v: %w", m, err, hostforge.ErrInvalid)
		}
		inv.Entries = append(inv.Entries, e)
	}
	return inv, nil
}

// Upload pushes one artifact: multipart to MultipartHttpPushUri with
// UpdateParameters (Targets only when the entry is install_only_specified),
// or, where the BMC has no multipart push, SimpleUpdate of the artifact's
// URL (logged). The task's resource path is the returned task ID. A pushed
// file with a digest in the catalog (its sha256, or a local file's legacy
// MD5) is hashed as it is sent, and the push is cut before its last byte
// unless it is the verified image (FIRMWARE_ARTIFACT_MISSING).
func (f *Firmware) Upload(ctx context.Context, machine string, u firmware.UploadRequest) (string, error) {
	c, err := f.connect(ctx, machine, true)
	if err != nil {
		return "", err
	}
	defer c.close()
	usPath, us, err := c.updateService(ctx)
	if err != nil {
		return "", classify(err, "reading the UpdateService of %s", machine)
	}
	var targets []string
	if u.InstallOnlySpecified {
		coll := link(us, "FirmwareInventory")
		if coll == "" {
			coll = usPath + "/FirmwareInventory"
		}
		for _, id := range u.Targets {
			targets = append(targets, coll+"/"+id)
		}
	}
	push := str(us, "MultipartHttpPushUri")
	if push == "" {
		return f.simpleUpdate(ctx, c, machine, us, u, targets)
	}
	file := u.Path
	if file == "" {
		file = u.Artifact.Filename
	}
	if file == "" {
		return "", firmware.ArtifactMissing.New("machine %s: %s %s artifact %d has no local file to push (a URL must be resolved first)", machine, u.Component, u.Version, u.Index+1)
	}
	digest, hasDigest, err := u.Artifact.Digest()
	if err != nil {
		return "", firmware.ArtifactMissing.New("machine %s: the artifact %s: %v", machine, file, err)
	}
	fh, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", firmware.ArtifactMissing.New("machine %s: the artifact %s does not exist", machine, file)
	}
	if err != nil {
		return "", firmware.ArtifactMissing.Wrap(err, "machine %s: opening the artifact %s", machine, file)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return "", firmware.ArtifactMissing.Wrap(err, "machine %s: reading the artifact %s", machine, file)
	}
	// The file was verified when it was resolved, by path; what is pushed
	// is verified again as it is sent (see verifiedFile).
	var image io.ReadSeeker = io.NewSectionReader(fh, 0, st.Size())
	var vf *verifiedFile
	if hasDigest {
		vf = &verifiedFile{f: fh, size: st.Size(), want: digest, h: digest.New()}
		image = vf
	}
	params := doc{"@Redfish.OperationApplyTime": "Immediate"}
	if targets != nil {
		params["Targets"] = targets
	}
	body, ctype, size, err := multipartBody(params, filepath.Base(file), image, st.Size())
	if err != nil {
		return "", firmware.ArtifactMissing.Wrap(err, "machine %s: reading the artifact %s", machine, file)
	}
	if err := c.followChecked(push, CheckPushURI); err != nil {
		return "", err
	}
	start := time.Now()
	resp, err := c.api.WithContext(ctx).RunRawRequestWithHeaders(http.MethodPost, push, body, ctype, map[string]string{"Content-Length": strconv.FormatInt(size, 10)})
	if vf != nil && vf.bad != nil {
		// The push was cut before the image's last byte: the BMC holds no
		// whole image.
		if resp != nil {
			resp.Body.Close()
		}
		return "", firmware.ArtifactMissing.New("machine %s: the artifact %s changed after it was verified (%v); the push was cut before its end", machine, file, vf.bad)
	}
	if err != nil {
		return "", classify(convert(ctx, c.secrets, err), "pushing %s to %s", filepath.Base(file), machine)
	}
	defer resp.Body.Close()
	task, err := taskOf(resp)
	if err != nil {
		return "", classify(err, "pushing %s to %s", filepath.Base(file), machine)
	}
	f.log().Info("firmware pushed", "machine", machine, "component", u.Component, "version", u.Version, "artifact", filepath.Base(file),
		"bytes", size, "took", time.Since(start).Round(time.Millisecond), "task", task, "push", u.PushID)
	return task, nil
}

// simpleUpdate is the fallback for a BMC without a multipart push: the BMC
// fetches the artifact's URL itself.
func (f *Firmware) simpleUpdate(ctx context.Context, c *client, machine string, us doc, u firmware.UploadRequest, targets []string) (string, error) {
	target := action(us, "#UpdateService.SimpleUpdate")
	if target == "" {
		return "", firmware.BMCRefused.New("machine %s: the BMC's UpdateService has neither MultipartHttpPushUri nor SimpleUpdate", machine)
	}
	if u.Artifact.URL == "" {
		return "", firmware.BMCRefused.New("machine %s: the BMC has no multipart push (MultipartHttpPushUri), and SimpleUpdate needs a URL the BMC can fetch; the artifact %s has none", machine, u.Artifact.Filename)
	}
	pu, err := url.Parse(u.Artifact.URL)
	if err != nil || pu.Scheme == "" {
		return "", firmware.ArtifactMissing.New("machine %s: the artifact URL %q is not a URL", machine, u.Artifact.URL)
	}
	f.log().Warn("the BMC has no multipart push (MultipartHttpPushUri): falling back to SimpleUpdate, the BMC fetches the artifact itself",
		"machine", machine, "component", u.Component, "version", u.Version, "image", redactURL(pu))
	body := doc{"ImageURI": u.Artifact.URL, "TransferProtocol": strings.ToUpper(pu.Scheme)}
	if targets != nil {
		body["Targets"] = targets
	}
	if err := c.follow(target); err != nil {
		return "", err
	}
	resp, err := c.api.WithContext(ctx).Post(target, body)
	if err != nil {
		return "", classify(convert(ctx, c.secrets, err), "SimpleUpdate of %s", machine)
	}
	defer resp.Body.Close()
	task, err := taskOf(resp)
	return task, classify(err, "SimpleUpdate of %s", machine)
}

// redactURL drops a URL's user information and query (where credentials
// for an artifact server may hide) for logs.
func redactURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery = nil, ""
	return c.String()
}

// verifiedFile reads an artifact for its push and hashes every byte it
// hands out, against the digest the artifact was verified by when it was
// resolved. It withholds the file's last byte until the digest of the
// whole file matches: a file changed since (rewritten, renamed over,
// truncated) fails the push before its end, so the BMC never receives a
// whole image that is not the verified one. Reads are positional (ReadAt):
// the HTTP client may rewind the body to resend it, which starts the hash
// again.
type verifiedFile struct {
	f    *os.File
	size int64
	want firmware.Digest
	h    hash.Hash
	pos  int64
	// bad says why the bytes are not the verified ones, once known.
	bad error
}

func (v *verifiedFile) Seek(off int64, whence int) (int64, error) {
	switch {
	case whence == io.SeekStart && off == 0:
		v.pos = 0
		v.h.Reset()
	case whence == io.SeekStart && off == v.pos:
	default:
		return 0, errors.New("redfish: the push's body was rewound to the middle of the artifact")
	}
	return off, nil
}

func (v *verifiedFile) Read(p []byte) (int, error) {
	if v.bad != nil {
		return 0, v.bad
	}
	left := v.size - v.pos
	if left <= 0 {
		if v.size == 0 && hex.EncodeToString(v.h.Sum(nil)) != v.want.Hex() {
			v.bad = fmt.Errorf("it is empty, and the catalog's %s is %s", v.want.Algorithm, v.want.Hex())
			return 0, v.bad
		}
		return 0, io.EOF
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	if int64(len(p)) == left && left > 1 {
		p = p[:left-1] // the last byte waits for the digest
	}
	n, err := v.f.ReadAt(p, v.pos)
	if n < len(p) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		v.bad = fmt.Errorf("it is shorter than when the push began: %w", err)
		return 0, v.bad
	}
	v.h.Write(p[:n])
	v.pos += int64(n)
	if v.pos == v.size {
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want.Hex() {
			v.bad = fmt.Errorf("its %s is now %s, the catalog says %s", v.want.Algorithm, got, v.want.Hex())
			return 0, v.bad
		}
	}
	return n, nil
}

// multipartBody builds the push's body around the image of size bytes
// without reading it into memory: UpdateParameters (JSON), then
// UpdateFile.
func multipartBody(params doc, name string, image io.ReadSeeker, size int64) (io.ReadSeeker, string, int64, error) {
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", `form-data; name="UpdateParameters"`)
	h.Set("Content-Type", "application/json")
	pw, err := mw.CreatePart(h)
	if err != nil {
		return nil, "", 0, err
	}
	if err := json.NewEncoder(pw).Encode(params); err != nil {
		return nil, "", 0, err
	}
	fh := make(textproto.MIMEHeader)
	fh.Set("Content-Disposition", fmt.Sprintf(`form-data; name="UpdateFile"; filename=%q`, name))
	fh.Set("Content-Type", "application/octet-stream")
	if _, err := mw.CreatePart(fh); err != nil {
		return nil, "", 0, err
	}
	prefix := append([]byte(nil), head.Bytes()...)
	head.Reset()
	if err := mw.Close(); err != nil {
		return nil, "", 0, err
	}
	// mw.Close wrote "\r\n--boundary--\r\n": its CRLF ends the file part.
	suffix := append([]byte(nil), head.Bytes()...)
	r := newConcatReader([]io.ReadSeeker{bytes.NewReader(prefix), image, bytes.NewReader(suffix)},
		[]int64{int64(len(prefix)), size, int64(len(suffix))})
	return r, mw.FormDataContentType(), int64(len(prefix)) + size + int64(len(suffix)), nil
}

// taskURI finds a task's resource in a message.
var taskURI = regexp.MustCompile(`/redfish/v1/TaskService/Tasks/[A-Za-z0-9_.:-]+`)

// taskOf reads the task a push or SimpleUpdate started: the Location
// header (a Task or its monitor), else the body's @odata.id or Id.
func taskOf(resp *http.Response) (string, error) {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	// A task is a resource below /redfish/, on the BMC itself.
	task := func(p string) (string, bool) {
		p = strings.TrimSuffix(strings.TrimSuffix(p, "/"), "/Monitor")
		return p, strings.HasPrefix(p, "/redfish/") && CheckLink(p) == nil
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		if u, err := url.Parse(loc); err == nil {
			if p, ok := task(u.Path); ok {
				return p, nil
			}
		}
	}
	var d struct {
		ID    string `json:"@odata.id"`
		Plain string `json:"Id"`
	}
	if json.Unmarshal(raw, &d) == nil {
		if p, ok := task(d.ID); ok && strings.Contains(p, "/Tasks/") {
			return p, nil
		}
		if d.Plain != "" && !strings.ContainsAny(d.Plain, "/?#") {
			return "/redfish/v1/TaskService/Tasks/" + d.Plain, nil
		}
	}
	// Supermicro names the task only in a message's arguments.
	if m := taskURI.Find(raw); m != nil {
		return string(m), nil
	}
	return "", fmt.Errorf("redfish: the BMC accepted the update (HTTP %d) but named no task: %w", resp.StatusCode, hostforge.ErrInvalid)
}

// Task polls a task by its resource path (or its Id under the
// TaskService). A task the BMC no longer knows (404) is Gone.
func (f *Firmware) Task(ctx context.Context, machine, taskID string) (firmware.Task, error) {
	c, err := f.connect(ctx, machine, false)
	if err != nil {
		return firmware.Task{}, err
	}
	defer c.close()
	p := taskID
	if !strings.HasPrefix(p, "/") {
		p = "/redfish/v1/TaskService/Tasks/" + p
	}
	d, err := c.get(ctx, p)
	if errors.Is(err, hostforge.ErrNotFound) {
		return firmware.Task{Gone: true}, nil
	}
	if err != nil {
		return firmware.Task{}, classify(err, "polling task %s of %s", taskID, machine)
	}
	t := firmware.Task{State: str(d, "TaskState")}
	for _, m := range asSlice(d["Messages"]) {
		if md, ok := m.(doc); ok && str(md, "Message") != "" {
			t.Messages = append(t.Messages, str(md, "Message"))
		}
	}
	if t.State == "" {
		return firmware.Task{}, firmware.BMCRefused.New("machine %s: task %s has no TaskState", machine, taskID)
	}
	return t, nil
}
