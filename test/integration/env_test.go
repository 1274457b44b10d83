//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	istioclient "istio.io/client-go/pkg/clientset/versioned"
)

// cluster is the running control plane the tests share.
type cluster struct {
	env     *envtest.Environment
	cfg     *rest.Config
	kube    kubernetes.Interface
	istio   istioclient.Interface
	kcm     *exec.Cmd
	kcmDone chan error
	dir     string // binaries
	tmp     string
}

var env *cluster

func TestMain(m *testing.M) {
	dir := os.Getenv("MESHREG_K8S_DIR")
	if dir == "" {
		fmt.Println("integration tier skipped: MESHREG_K8S_DIR is not set; `make test` builds the servers with hack/k8s/build.sh and sets it")
		os.Exit(0)
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			fmt.Printf("integration tier skipped: %s is missing from %s; run hack/k8s/build.sh\n", b, dir)
			os.Exit(0)
		}
	}
	var err error
	env, err = startCluster(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the control plane:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		code = 1
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		code = 1
	}
	os.Exit(code)
}

func startCluster(dir string) (*cluster, error) {
	crds, err := istioCRDs()
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir}
	c.env = &envtest.Environment{
		BinaryAssetsDirectory:    dir,
		CRDDirectoryPaths:        []string{crds},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	// The golden scenarios' VIPs are in 10.96.0.0/16.
	c.env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.96.0.0/16")
	if c.cfg, err = c.env.Start(); err != nil {
		return nil, fmt.Errorf("envtest: %w", err)
	}
	if c.kube, err = kubernetes.NewForConfig(c.cfg); err != nil {
		return nil, err
	}
	if c.istio, err = istioclient.NewForConfig(c.cfg); err != nil {
		return nil, err
	}
	if c.tmp, err = os.MkdirTemp("", "meshreg-integration-"); err != nil {
		return nil, err
	}
	if err := c.startControllerManager(); err != nil {
		_ = c.env.Stop()
		return nil, err
	}
	return c, nil
}

// startControllerManager runs kube-controller-manager with only the
// EndpointSlice controllers, as a user in system:masters.
func (c *cluster) startControllerManager() error {
	user, err := c.env.ControlPlane.AddUser(envtest.User{Name: "meshreg-kcm", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("adding the controller-manager's user: %w", err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return err
	}
	path := filepath.Join(c.tmp, "kcm.kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		return err
	}
	c.kcm = exec.Command(filepath.Join(c.dir, "kube-controller-manager"),
		"--kubeconfig="+path, "--authentication-kubeconfig="+path, "--authorization-kubeconfig="+path,
		"--controllers=endpointslice,endpointslicemirroring", "--leader-elect=false", "--secure-port=0",
		"--concurrent-service-endpoint-syncs=5", "--endpointslice-updates-batch-period=0s")
	logf, err := os.Create(filepath.Join(c.tmp, "kcm.log"))
	if err != nil {
		return err
	}
	c.kcm.Stdout, c.kcm.Stderr = logf, logf
	if err := c.kcm.Start(); err != nil {
		return fmt.Errorf("kube-controller-manager: %w", err)
	}
	c.kcmDone = make(chan error, 1)
	go func() { c.kcmDone <- c.kcm.Wait(); logf.Close() }()
	return nil
}

func (c *cluster) stop() error {
	if c.kcm != nil && c.kcm.Process != nil {
		_ = c.kcm.Process.Signal(os.Interrupt)
		select {
		case <-c.kcmDone:
		case <-time.After(20 * time.Second):
			_ = c.kcm.Process.Kill()
			<-c.kcmDone
		}
	}
	err := c.env.Stop()
	_ = os.RemoveAll(c.tmp)
	return err
}

// istioCRDs returns the file of Istio's CRDs that ships in the istio.io/api
// module.
func istioCRDs() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "istio.io/api").Output()
	if err != nil {
		return "", fmt.Errorf("locating istio.io/api: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "kubernetes", "customresourcedefinitions.gen.yaml"), nil
}

// eventually polls cond until it holds or the deadline passes; it fails
// the test with what last said.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	err := waitFor(timeout, what, func() error {
		if ok, msg := cond(); !ok {
			return errors.New(msg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func ctxFor(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), 3*time.Minute)
}
