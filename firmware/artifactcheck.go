package firmware

import (
	"crypto/md5" //nolint:gosec // the catalog's legacy checksum field is MD5; it verifies local files only
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"net/url"
	"strings"
)

// Digest is what an artifact's bytes are verified against: its sha256,
// or for a local file the legacy MD5 checksum.
type Digest struct {
	// Algorithm is "sha256" or "md5".
	Algorithm string
	// Sum is the digest's bytes.
	Sum []byte
}

// New returns a hash of the digest's algorithm.
func (d Digest) New() hash.Hash {
	if d.Algorithm == "md5" {
		return md5.New() //nolint:gosec // see the import
	}
	return sha256.New()
}

// Hex is the digest in lower-case hex.
func (d Digest) Hex() string { return hex.EncodeToString(d.Sum) }

// Digest returns what the artifact is verified against: its sha256 when
// given, else its legacy MD5 checksum; ok is false when it has neither. A
// value that is not a digest of its kind is an error (the catalog refuses
// it when loading).
func (a Artifact) Digest() (d Digest, ok bool, err error) {
	if s := strings.TrimSpace(a.SHA256); s != "" {
		b, err := hex.DecodeString(s)
		if err != nil || len(b) != sha256.Size {
			return Digest{}, false, fmt.Errorf("sha256 %q is not a SHA-256 digest (64 hexadecimal digits)", a.SHA256)
		}
		return Digest{"sha256", b}, true, nil
	}
	if s := strings.TrimSpace(a.Checksum); s != "" {
		b, err := hex.DecodeString(s)
		if err != nil || len(b) != md5.Size {
			return Digest{}, false, fmt.Errorf("checksum %q is not an MD5 digest (32 hexadecimal digits)", a.Checksum)
		}
		return Digest{"md5", b}, true, nil
	}
	return Digest{}, false, nil
}

// fetched reports whether the artifact may be downloaded: it has a URL
// (a filename beside it is tried first, the URL when that file is absent).
func (a Artifact) fetched() bool { return strings.TrimSpace(a.URL) != "" }

// artifactProblem checks what an artifact must prove where it is declared
// (a catalog file, a runtime override), and names the key at fault:
//
//   - a digest that is given must be one (sha256: 64 hex digits, the
//     legacy checksum: 32);
//   - an artifact fetched by URL needs its sha256: a download is verified
//     by it before it is cached or pushed, and the legacy MD5 checksum
//     does not do (anyone can make a file with a given MD5);
//   - the URL is https, or plain http when the source opts in with
//     allow_http (the sha256 still verifies it; every download is logged).
func artifactProblem(a Artifact) (key, msg string) {
	if strings.TrimSpace(a.SHA256) != "" {
		if _, _, err := (Artifact{SHA256: a.SHA256}).Digest(); err != nil {
			return "sha256", fmt.Sprintf("%q is not a SHA-256 digest (64 hexadecimal digits)", a.SHA256)
		}
	}
	if strings.TrimSpace(a.Checksum) != "" {
		if _, _, err := (Artifact{Checksum: a.Checksum}).Digest(); err != nil {
			return "checksum", fmt.Sprintf("%q is not an MD5 checksum (32 hexadecimal digits)", a.Checksum)
		}
	}
	if !a.fetched() {
		return "", ""
	}
	shown := redactArtifactURL(a.URL)
	u, err := url.Parse(strings.TrimSpace(a.URL))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "url", fmt.Sprintf("%s is not an https URL", shown)
	}
	if strings.TrimSpace(a.SHA256) == "" {
		return "sha256", fmt.Sprintf("missing: the artifact %s is downloaded, and a download must prove what it is by its SHA-256 (64 hexadecimal digits; an MD5 checksum does not do)", shown)
	}
	if u.Scheme == "http" && !a.AllowHTTP {
		return "url", fmt.Sprintf("%s is plain http: serve it over https, or opt this source in with allow_http = true (its sha256 still verifies it; every download is logged)", shown)
	}
	return "", ""
}

// redactArtifactURL drops a URL's user information and query (where an
// artifact server's credentials may hide) for messages.
func redactArtifactURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "(an unparsable URL)"
	}
	u.User, u.RawQuery, u.ForceQuery = nil, "", false
	return u.String()
}

// Downloads lists the catalog's artifacts that name a URL — what the
// update workflow would download into an artifact cache — as "vendor /
// model component version: url", sorted by model. A site without a cache
// cannot install them.
func (c *Catalog) Downloads() []string {
	var out []string
	for _, m := range c.Models() {
		for _, t := range ComponentTypes {
			comp, ok := m.Components[t]
			if !ok {
				continue
			}
			for _, e := range comp.KnownFirmware {
				for _, a := range e.Artifacts {
					if a.URL != "" {
						out = append(out, fmt.Sprintf("%s / %s %s %s: %s", m.Vendor, m.Model, t, e.Version, a.URL))
					}
				}
			}
		}
	}
	return out
}
