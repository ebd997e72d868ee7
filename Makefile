.PHONY: test integration generate quickstart bench-ironic

# The unit suite: needs nothing but Go.
test:
	go test -race ./...

# Real components (sshd, dhcpd, kea, Ironic, Temporal) on loopback; root on Debian/Ubuntu.
integration:
	scripts/integration

generate:
	go generate ./...

quickstart:
	go run ./examples/quickstart

# Time to available on a real Ironic (fake-hardware): hostforge against a
# tight poll loop (the limit) and openstacksdk. Starts its own Ironic on
# loopback; root or sudo on Debian/Ubuntu the first time. ARGS go to
# internal/benchironic, e.g. make bench-ironic ARGS="-nodes 20 -rounds 3 -detail".
# ARGS="-delays" starts that Ironic with realistic transition times
# (fake-hardware's [fake] delays, 3 s per call; -fake-delays power=2-5,... to
# choose) and scales hostforge's waits by 1/10 (-timing-scale).
bench-ironic:
	scripts/bench-ironic $(ARGS)
