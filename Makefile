# meshreg developer targets. `make test` is the test command of the README.

GO ?= go

# PKGS are the packages the targets work on. Narrow it to run a part of the
# suite, e.g. `make test PKGS=./model/...`.
PKGS ?= ./...

# TEST_TIERS are the test tiers `make test` runs, in order, each the target
# test-<tier>. Hook for the tiers to come (integration against a real
# kube-apiserver, end to end): add the tier to this list, here, before the
# rules, and give it a test-<tier> target below; a tier that cannot run on
# this machine says so and skips rather than fails.
TEST_TIERS := unit

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

## lint: gofmt must have nothing to say; go vet must pass.
lint:
	@unformatted="$$(gofmt -l $(GOFILES))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt -l: these files need gofmt -w:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)

## bench: every benchmark, with allocations, no tests.
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)
