"""The openstacksdk side of bench-ironic: the same writes as hostforge for
every node, concurrently (one thread per node), each wait done by the SDK's
own wait_for_* helpers (set_node_*_state(..., wait=True)).

Reads the scenario as JSON on stdin: {"endpoint": URL, "nodes": [...]}.
Prints one JSON line: {"wall_s": seconds from the first create to the last
node available, "nodes": n}.
"""
import concurrent.futures
import json
import sys
import time

import openstack


def main():
    spec = json.load(sys.stdin)
    conn = openstack.connection.Connection(
        auth_type="none",
        baremetal_endpoint_override=spec["endpoint"],
        baremetal_api_version="1.81",
    )
    timeout = spec.get("timeout", 600)

    def one(n):
        attrs = {
            "name": n["name"], "driver": n["driver"], "provision_state": "enroll",
            "driver_info": n["driver_info"], "properties": n["properties"],
            "resource_class": n["resource_class"],
        }
        for k, v in n["interfaces"].items():
            attrs[k + "_interface"] = v
        node = conn.baremetal.create_node(**attrs)
        for p in n["ports"]:
            conn.baremetal.create_port(
                node_uuid=node.id, address=p["address"],
                pxe_enabled=p["pxe_enabled"],
                local_link_connection=p.get("local_link_connection") or {})
        conn.baremetal.set_node_provision_state(node, "manage", wait=True, timeout=timeout)
        conn.baremetal.set_node_power_state(node, "power on", wait=True, timeout=timeout)
        conn.baremetal.patch_node(node, [{k: v for k, v in op.items() if k in ("op", "path", "value")} for op in n["patch"]])
        conn.baremetal.set_node_traits(node, n["traits"])
        conn.baremetal.set_node_provision_state(node, "provide", wait=True, timeout=timeout)

    # Negotiate the API version before the clock starts, as the Go sides do
    # when they connect.
    list(conn.baremetal.nodes(limit=1))
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(spec["nodes"])) as pool:
        for f in [pool.submit(one, n) for n in spec["nodes"]]:
            f.result()
    print(json.dumps({"wall_s": time.monotonic() - start, "nodes": len(spec["nodes"])}))


if __name__ == "__main__":
    main()
