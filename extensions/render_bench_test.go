package extensions

import (
	"strings"
	"testing"
)

// BenchmarkRenderTask is the render time of one task as dispatch renders
// it: the event's payload parsed once (as the dispatcher caches it), the
// task's template rendered against it. Payloads are the specification's
// examples; the templates are the size MetalSoft webhooks and commands use.
func BenchmarkRenderTask(b *testing.B) {
	cases := []struct {
		name, payload string
		stage         Stage
		task          string
	}{
		{"webhook/server", "server", ServerRegisteredStage, webhookTask("t", `{"serial": {{ server.serialNumber | dump }}, "vendor": "{{ server.vendor }}", "model": {{ server.model | dump }}, "cpu": "{{ server.processorCount }}x {{ server.processorName }}", "ghz": {{ server.processorCoreMhz / 1000 }}, "ram": {{ server.ramGbytes }}, "bmc": "{{ server.managementAddress }}", "controllers": [{% for c in server.storageControllers %}{{ c.name | dump }}{% if not loop.last %},{% endif %}{% endfor %}]}`)},
		{"ssh/server", "server", ServerRegisteredStage, sshTask("t", "ipmitool -H {{ server.managementAddress | shellquote }} -U {{ server.username | shellquote }} chassis power status")},
		{"ansible/server", "server", ServerRegisteredStage, ansibleTask("t")},
		{"webhook/networkDevice", "networkDevice", SwitchRegistered, webhookTask("t", `{"switch": "{{ networkDevice.identifierString }}", "role": "{{ networkDevice.position.role }}", "tags": {{ networkDevice.tags | dump }}, "mgmt": "{{ networkDevice.managementAddress }}/{{ networkDevice.managementAddressPrefixLength }}"}`)},
		{"webhook/serverInstanceRecordSet", "serverInstanceRecordSet", ServerInstanceUpdate, webhookTask("t", `{% for ip in serverInstanceRecordSet.instanceIpv4Ips %}{{ ip.ip }}/{{ ip.maskBits }} via {{ ip.gateway }};{% endfor %}{% for ln in serverInstanceRecordSet.logicalNetworks %}{{ ln.logicalNetworkName }}={{ ln.vlans | join(",", "vlanId") }};{% endfor %}`)},
		{"webhook/serverInstanceGroupDNSRecordSet", "serverInstanceGroupDNSRecordSet", ServerInstanceGroupUpdateDNS, webhookTask("t", `{% for r in serverInstanceGroupDNSRecordSet.records %}{{ r.name }} {{ r.ttl }} IN {{ r.type }} {{ r.records | join(" ") }}
{% endfor %}`)},
		{"webhook/serverDNSRecordSet", "serverDNSRecordSet", ServerCreateDNS, webhookTask("t", `{"op": "{{ serverDNSRecordSet.operation }}", "fqdn": "{{ serverDNSRecordSet.fqdn }}", "ip": "{{ serverDNSRecordSet.ip.ip }}"}`)},
	}
	for _, c := range cases {
		x := mustParse(b, definition(stage(string(c.stage), c.task)))
		d, err := newPayloadData(c.stage, specPayload(b, c.payload))
		if err != nil {
			b.Fatal(err)
		}
		t := x.Tasks(c.stage)[0]
		if _, _, err := x.render(b.Context(), t, d, nil, RenderOptions{}); err != nil {
			b.Fatal(err)
		}
		b.Run(strings.ReplaceAll(c.name, "/", "-"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := x.render(b.Context(), t, d, nil, RenderOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		if t.TaskType == TaskAnsible {
			// The first Ansible task of an event encodes the payload as its
			// extra-vars; later ones reuse the encoding.
			b.Run(strings.ReplaceAll(c.name, "/", "-")+"-first-of-event", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					d.cleanJSON = nil
					if _, _, err := x.render(b.Context(), t, d, nil, RenderOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
