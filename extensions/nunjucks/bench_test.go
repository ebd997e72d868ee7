package nunjucks

import (
	"os"
	"path/filepath"
	"testing"
)

// The render time of one task, for the specification's example payloads
// and templates of the size MetalSoft extensions use (the golden corpus's
// specification-payload templates). The payload is parsed once per event, not per
// task, so parsing is measured on its own.
func BenchmarkRender(b *testing.B) {
	for _, name := range []string{"server--webhook-body", "server--ssh-command", "networkDevice--switch-inventory", "serverInstanceRecordSet--ip-list", "serverInstanceGroupDNSRecordSet--zone-file", "serverDNSRecordSet--nsupdate"} {
		src, err := os.ReadFile(filepath.Join(corpus, "templates", name+".njk"))
		if err != nil {
			b.Fatal(err)
		}
		payload, _, _ := cutName(name)
		data := loadPayload(b, payload)
		tpl, err := Parse(string(src))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tpl.Render(b.Context(), data, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	src, err := os.ReadFile(filepath.Join(corpus, "templates", "server--webhook-body.njk"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(string(src)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFromJSON(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join(corpus, "payloads", "server.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := FromJSON(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func cutName(name string) (string, string, bool) {
	for i := 0; i+1 < len(name); i++ {
		if name[i] == '-' && name[i+1] == '-' {
			return name[:i], name[i+2:], true
		}
	}
	return name, "", false
}

func BenchmarkDump(b *testing.B) {
	data := loadPayload(b, "server")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Dump(data, ""); err != nil {
			b.Fatal(err)
		}
	}
}
