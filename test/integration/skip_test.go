//go:build !integration

package integration

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestIntegrationTier(t *testing.T) {
	t.Skip("integration tier not run: it needs -tags integration and the servers built by hack/k8s/build.sh " +
		"(MESHREG_K8S_DIR=$(hack/k8s/build.sh | tail -1) go test -tags integration ./test/integration/), as `make test` does")
}
