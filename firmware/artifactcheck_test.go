package firmware_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/firmware"
)

const (
	goodSHA = "3f1d6d1c5e0a4c8b9a7e2f6d5c4b3a2918f7e6d5c4b3a29180f1e2d3c4b5a697"
	goodMD5 = "f4d4e0954b5635e6c9a8c79ebaa95218"
)

// entryDoc is a metadata.toml whose uefi default entry is body.
func entryDoc(body string) string {
	return "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[components.uefi]\ncurrent_version_reported_as = \"^Installed-.*__BIOS.Setup.\"\n[[components.uefi.known_firmware]]\nversion = \"1.13.2\"\ndefault = true\n" + body
}

// An artifact fetched by URL must prove what it is: the catalog refuses,
// where it is declared, a URL artifact without a sha256 (or with the legacy
// MD5 checksum only), a digest that is not one, and plain http without the
// source's allow_http. Each refusal names the file, line, table and key.
func TestCatalogRefusesUnverifiedDownloads(t *testing.T) {
	const table = "[components.uefi.known_firmware[0].files[0]]"
	cases := []struct {
		name string
		body string
		want []string // the message contains each
	}{
		{"a URL without sha256", "[[components.uefi.known_firmware.files]]\nurl = \"https://fw.example.net/bios.exe\"\n",
			[]string{"cat.toml:8", table + " sha256", "missing", "https://fw.example.net/bios.exe"}},
		{"a legacy url with an MD5 checksum", "url = \"https://fw.example.net/bios.exe\"\nchecksum = \"" + goodMD5 + "\"\n",
			[]string{"cat.toml:8", "[components.uefi.known_firmware[0]] url", "sha256", "MD5", "files = [{ url"}},
		{"a legacy url with a filename and no digest", "filename = \"/fw/bios.exe\"\nurl = \"https://fw.example.net/bios.exe\"\n",
			[]string{"[components.uefi.known_firmware[0]] url", "sha256"}},
		{"a placeholder sha256", "[[components.uefi.known_firmware.files]]\nurl = \"https://fw.example.net/bios.exe\"\nsha256 = \"def456\"\n",
			[]string{"cat.toml:10", table + " sha256", `"def456" is not a SHA-256`}},
		{"a placeholder sha256 of a local file", "[[components.uefi.known_firmware.files]]\nfilename = \"/fw/bios.exe\"\nsha256 = \"abc123\"\n",
			[]string{table + " sha256", `"abc123" is not a SHA-256`}},
		{"a malformed legacy checksum", "filename = \"/fw/bios.exe\"\nchecksum = \"f4d4\"\n",
			[]string{"[components.uefi.known_firmware[0]] checksum", "not an MD5"}},
		{"plain http", "[[components.uefi.known_firmware.files]]\nurl = \"http://fw.example.net/bios.exe\"\nsha256 = \"" + goodSHA + "\"\n",
			[]string{"cat.toml:9", table + " url", "plain http", "allow_http = true"}},
		{"not an http URL", "[[components.uefi.known_firmware.files]]\nurl = \"ftp://fw.example.net/bios.exe\"\nsha256 = \"" + goodSHA + "\"\n",
			[]string{table + " url", "not an https URL"}},
		{"a URL without a host", "[[components.uefi.known_firmware.files]]\nurl = \"https:///bios.exe\"\nsha256 = \"" + goodSHA + "\"\n",
			[]string{table + " url", "not an https URL"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat, err := firmware.ParseCatalog("cat.toml", []byte(entryDoc(c.body)))
			if !firmware.CatalogInvalid.Is(err) {
				t.Fatalf("ParseCatalog = %v, %v; want FIRMWARE_CATALOG_INVALID", cat, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// What proves itself is accepted: https with a sha256, plain http with a
// sha256 and the source's allow_http, local files with or without a digest
// (the legacy MD5 of a local file included).
func TestCatalogAcceptsVerifiedDownloads(t *testing.T) {
	cases := []struct {
		name string
		body string
		want []firmware.Artifact
	}{
		{"https with sha256", "[[components.uefi.known_firmware.files]]\nurl = \"https://fw.example.net/bios.exe\"\nsha256 = \"" + strings.ToUpper(goodSHA) + "\"\n",
			[]firmware.Artifact{{URL: "https://fw.example.net/bios.exe", SHA256: strings.ToUpper(goodSHA)}}},
		{"http opted in", "[[components.uefi.known_firmware.files]]\nurl = \"http://fw.lab.internal/bios.exe\"\nsha256 = \"" + goodSHA + "\"\nallow_http = true\n",
			[]firmware.Artifact{{URL: "http://fw.lab.internal/bios.exe", SHA256: goodSHA, AllowHTTP: true}}},
		{"a local file", "filename = \"/fw/bios.exe\"\n", []firmware.Artifact{{Filename: "/fw/bios.exe"}}},
		{"a local file with its MD5", "filename = \"/fw/bios.exe\"\nchecksum = \"" + goodMD5 + "\"\n", []firmware.Artifact{{Filename: "/fw/bios.exe", Checksum: goodMD5}}},
		{"local files", "filenames = [\"/fw/a.bin\", \"/fw/b.bin\"]\n", []firmware.Artifact{{Filename: "/fw/a.bin"}, {Filename: "/fw/b.bin"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := mustParse(t, "cat.toml", entryDoc(c.body))
			e, _ := model(t, cat, "Dell", "PowerEdge R750").Components[firmware.UEFI].Default()
			if !reflect.DeepEqual(e.Artifacts, c.want) {
				t.Errorf("artifacts %+v, want %+v", e.Artifacts, c.want)
			}
		})
	}
}

// A runtime override is declared when it is applied: the same rules hold,
// and an override that breaks them is refused whole.
func TestOverridesRefuseUnverifiedDownloads(t *testing.T) {
	base := mustParse(t, "base.toml", r750)
	at := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	ov := func(a firmware.Artifact) []firmware.Override {
		return []firmware.Override{{Vendor: "Dell", Model: "PowerEdge R750", Component: firmware.UEFI, UpdatedAt: at,
			Entry: firmware.Entry{Version: "1.14.0", Default: true, Artifacts: []firmware.Artifact{a}}}}
	}
	for _, a := range []firmware.Artifact{
		{URL: "https://fw.example.net/bios.exe"},
		{URL: "https://fw.example.net/bios.exe", Checksum: goodMD5},
		{URL: "http://fw.example.net/bios.exe", SHA256: goodSHA},
		{URL: "https://fw.example.net/bios.exe", SHA256: "ab"},
	} {
		if _, err := base.WithOverrides(ov(a)); !firmware.CatalogInvalid.Is(err) || !strings.Contains(err.Error(), "override Dell / PowerEdge R750 uefi 1.14.0") {
			t.Errorf("override with %+v: %v, want FIRMWARE_CATALOG_INVALID naming the override", a, err)
		}
	}
	if _, err := base.WithOverrides(ov(firmware.Artifact{URL: "https://fw.example.net/bios.exe", SHA256: goodSHA})); err != nil {
		t.Errorf("a verified override was refused: %v", err)
	}
}
