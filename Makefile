# meshreg developer targets. `make test` is the test command of the README.

GO ?= go

# PKGS are the packages the targets work on. Narrow it to run a part of the
# suite, e.g. `make test PKGS=./model/...`.
PKGS ?= ./...

# TEST_TIERS are the test tiers `make test` runs, in order, each the target
# test-<tier>. To add a tier (integration runs against a real
# kube-apiserver, end to end): add the tier to this list, here, before the
# rules, and give it a test-<tier> target below; a tier that cannot run on
# this machine says so and skips rather than fails.
TEST_TIERS := unit integration

# GOFILES are the Go files lint checks: those git tracks or would track
# (ignored files, such as local tools, are left out), or every Go file
# outside a git checkout.
GOFILES = $(shell git ls-files --cached --others --exclude-standard -- '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*')

.PHONY: test $(addprefix test-,$(TEST_TIERS)) lint bench

## test: every available test tier, with the race detector.
test: $(addprefix test-,$(TEST_TIERS))

## test-unit: unit tests, examples, fuzz seed corpora and golden scenarios.
test-unit:
	$(GO) test -race -count=1 $(PKGS)

## test-integration: the kube and serviceentry controllers against a real
## kube-apiserver, etcd and EndpointSlice controller, and the fault tests
## over two clusters of their own (about 5 minutes on 2 cores, hence the
## timeout above go test's default of 10); then the kube controller's
## tests and the address index over it once more on shared informers,
## the Gateway API's included (-shared, about a minute).
## hack/k8s/build.sh builds the servers once into a versioned cache (its
## last line is the directory); the tests are behind the integration
## build tag.
test-integration:
	@dir="$$(hack/k8s/build.sh | tail -n 1)" && \
	MESHREG_K8S_DIR="$$dir" $(GO) test -race -count=1 -timeout 30m -tags integration ./test/integration/ && \
	echo "--- the kube controller's tests again, on shared informers" && \
	MESHREG_K8S_DIR="$$dir" $(GO) test -race -count=1 -timeout 30m -tags integration \
		-run '^(TestEndpointsFromTheEndpointSliceController|TestOutageThenRelist|TestNamespaceFilter|TestTopologyHintsFromTheEndpointSliceController|TestGatewayFromLoadBalancerStatus|TestGatewayFromGatewayAPI|TestMCSExportsAndImports|TestAddressIndexOverTheAPIServer)$$' \
		./test/integration/ -args -shared

## lint: gofmt must have nothing to say; go.mod and go.sum must be tidy;
## go vet must pass. `go mod tidy -diff` changes nothing: it prints what
## tidy would change and fails when that is not empty. It reads the
## module cache, and downloads from the module proxy what the cache
## lacks (as the build does anyway), so offline it works only with a
## warm cache; a failure to run it is reported apart from a diff.
lint:
	@unformatted="$$(gofmt -l $(GOFILES))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt -l: these files need gofmt -w:"; echo "$$unformatted"; exit 1; fi
	@untidy="$$($(GO) mod tidy -diff)"; status=$$?; \
	if [ -n "$$untidy" ]; then echo "go mod tidy -diff: go.mod and go.sum are not tidy; run 'go mod tidy' and commit the result:"; echo "$$untidy"; exit 1; fi; \
	if [ "$$status" -ne 0 ]; then echo "go mod tidy -diff failed (exit status $$status, error above) before it could compare: it needs every module in the module cache or the module proxy"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) vet -tags integration ./test/integration/

## bench: every benchmark, with allocations, no tests.
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)
