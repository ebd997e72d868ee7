package verify_test

import (
	"fmt"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/verify"
)

// A host whose eth0 was cabled to the wrong port: the report names the switch
// port to go to and maps to a classified failure owned by the on-site team.
func ExampleCheck() {
	inv, err := verify.ParseInventory([]byte(`{
	  "inventory": {
	    "interfaces": [{"name": "eth0", "mac_address": "44:a8:42:00:00:01", "has_carrier": true,
	                    "lldp": [[1, "0444a842c1d2e3"], [2, "0573777037"], [5, "6c6561662d332e646331"], [0, ""]]}],
	    "cpu": {"count": 64, "architecture": "x86_64"}
	  },
	  "plugin_data": {}
	}`))
	if err != nil {
		panic(err)
	}
	exp, err := verify.ExpectationsFrom("host-a1",
		map[string]any{"cpu": map[string]any{"architecture": "x86_64", "count": 64}},
		[]verify.Cable{{Interface: "eth0", MAC: "44:a8:42:00:00:01", Switch: "leaf-3", Port: "swp12"}}, false)
	if err != nil {
		panic(err)
	}
	rep := verify.Check(inv, exp)
	for _, m := range rep.Mismatches {
		fmt.Println(m.Check, m.Subject)
		fmt.Println(m.Action)
	}
	f, _ := hostforge.AsFailure(rep.Err())
	fmt.Println(f.Code, f.Owner, f.Retryable)
	// Output:
	// lldp eth0
	// switch leaf-3 port swp12: NetBox expects host host-a1 eth0 (44:a8:42:00:00:01) here, but LLDP on eth0 saw switch leaf-3.dc1 port swp7: move the cable to switch leaf-3 port swp12, or fix the cable in NetBox if NetBox is stale, then rerun
	// INSPECTION_CABLING_MISMATCH DC_OPS false
}

// Decoding IPA's raw [type, "hex"] pairs, as fleetctl lldp decode does.
func ExampleDecodeLLDPJSON() {
	l, err := verify.DecodeLLDPJSON([]byte(`[[1, "04c47ee0e4553f"], [2, "0545746865726e6574312f34"], [3, "0078"],
	  [5, "6632302d332d312e69616433"], [127, "0080c2030faa11343031305f70726f766973696f6e696e67"],
	  [127, "00120f042328"], [0, ""]]`))
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Name(), l.Port(), l.ChassisID, *l.TTL)
	fmt.Println(l.VLANs, *l.MaxFrameSize, l.End)
	// Output:
	// f20-3-1.iad3 Ethernet1/4 c4:7e:e0:e4:55:3f 120
	// [{4010 4010_provisioning}] 9000 true
}

// An expectations file for verifying a saved inventory offline.
func ExampleLoadExpectations() {
	exp, err := verify.LoadExpectations([]byte(`
device: host-a1
cables:
  - {interface: eth0, mac: "44:a8:42:00:00:01", switch: leaf-3, port: swp12}
validation:
  memory: {physical_mb: 524288, dimm_count: 16}
  gpus: [{vendor_id: "10de", device_id: "26b9", count: 8}]
`))
	if err != nil {
		panic(err)
	}
	fmt.Println(exp.Device, exp.Cables[0].Switch, exp.Cables[0].Port, *exp.Memory.DIMMCount, exp.GPUs[0].Count)
	// Output: host-a1 leaf-3 swp12 16 8
}
