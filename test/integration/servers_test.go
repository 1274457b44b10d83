//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	istioclient "istio.io/client-go/pkg/clientset/versioned"
)

// faultCluster is a control plane the fault tests start, stop and
// restart process by process: etcd, kube-apiserver, and a
// kube-controller-manager with the EndpointSlice, Deployment and
// ReplicaSet controllers. Unlike envtest's, its API server can be killed
// and started again on the same port, with the same certificates, and its
// clients authenticate with bearer tokens from a file the test rewrites,
// so that credentials can be rotated (and old ones refused) across a
// restart.
type faultCluster struct {
	name      string
	dir       string // binaries
	tmp       string
	etcdPort  int
	apiPort   int
	watchOff  bool // --watch-cache=false: watches are served by etcd
	ca        []byte
	etcd, api *process
	kcm       *process

	// mu guards tokens, the token file's users by token.
	mu     sync.Mutex
	tokens map[string]string

	admin kubernetes.Interface // direct, as the admin
	istio istioclient.Interface
	cfg   *rest.Config
	http  *http.Client // to etcd, without idle connections left behind
}

// process is one server process and its exit.
type process struct {
	cmd  *exec.Cmd
	done chan error
}

func startProcess(name, log string, bin string, args ...string) (*process, error) {
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &process{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); f.Close() }()
	return p, nil
}

// kill ends the process at once, as a crash or an OOM kill would.
func (p *process) kill() {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// stop asks the process to end, and kills it after a while.
func (p *process) stop() {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.kill()
	}
}

const adminToken = "admin-token"

// startFaultCluster starts a control plane with Istio's CRDs until the
// test ends, whose API server accepts the admin's token, the controller
// manager's and those of users (token to user name). With watchOff, it
// serves watches from etcd, as one started with --watch-cache=false
// does.
func startFaultCluster(t *testing.T, name string, watchOff bool, users map[string]string) *faultCluster {
	t.Helper()
	c := &faultCluster{name: name, dir: env.dir, watchOff: watchOff, http: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}}
	var err error
	c.tmp, err = os.MkdirTemp("", "meshreg-fault-"+name+"-")
	must(t, err)
	t.Cleanup(func() {
		c.kcm.stop()
		c.api.stop()
		c.etcd.stop()
		if t.Failed() {
			for _, log := range []string{"etcd.log", "apiserver.log", "kcm.log"} {
				t.Logf("%s's %s ends:\n%s", name, log, tail(filepath.Join(c.tmp, log), 20))
			}
		}
		_ = os.RemoveAll(c.tmp)
	})
	must(t, c.setTokens(users))
	must(t, c.writeCerts())
	ports, err := freePorts(3)
	must(t, err)
	c.etcdPort, c.apiPort = ports[0], ports[1]
	peer := ports[2]
	c.etcd, err = startProcess("etcd", filepath.Join(c.tmp, "etcd.log"), filepath.Join(c.dir, "etcd"),
		"--name=default", "--data-dir="+filepath.Join(c.tmp, "etcd"),
		"--listen-client-urls="+c.etcdURL(), "--advertise-client-urls="+c.etcdURL(),
		fmt.Sprintf("--listen-peer-urls=http://127.0.0.1:%d", peer),
		fmt.Sprintf("--initial-advertise-peer-urls=http://127.0.0.1:%d", peer),
		fmt.Sprintf("--initial-cluster=default=http://127.0.0.1:%d", peer),
		"--unsafe-no-fsync=true", "--enable-grpc-gateway=true")
	must(t, err)
	must(t, waitFor(time.Minute, "etcd", func() error {
		resp, err := c.http.Get(c.etcdURL() + "/health")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %s", resp.Status)
		}
		return nil
	}))
	must(t, c.startAPIServer())
	c.cfg = c.config(adminToken, "")
	c.admin, err = kubernetes.NewForConfig(c.cfg)
	must(t, err)
	c.istio, err = istioclient.NewForConfig(c.cfg)
	must(t, err)
	must(t, c.waitReady())
	crds, err := istioCRDs()
	must(t, err)
	_, err = envtest.InstallCRDs(c.cfg, envtest.CRDInstallOptions{Paths: []string{crds}, ErrorIfPathMissing: true})
	must(t, err)
	must(t, c.startControllerManager())
	return c
}

func (c *faultCluster) etcdURL() string { return fmt.Sprintf("http://127.0.0.1:%d", c.etcdPort) }

// Host is the API server's address, host:port.
func (c *faultCluster) Host() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.apiPort)) }

// config is a client configuration for token, at host (the API server's
// own address when empty).
func (c *faultCluster) config(token, host string) *rest.Config {
	if host == "" {
		host = c.Host()
	}
	return &rest.Config{
		Host: "https://" + host, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.ca},
		QPS:             -1, // the tests' writers are not rate limited on the client side
	}
}

// kubeconfig is a kubeconfig for token at host, for a cluster Secret.
func (c *faultCluster) kubeconfig(token, host string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[c.name] = &clientcmdapi.Cluster{Server: "https://" + host, CertificateAuthorityData: c.ca}
	cfg.AuthInfos[c.name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[c.name] = &clientcmdapi.Context{Cluster: c.name, AuthInfo: c.name}
	cfg.CurrentContext = c.name
	return clientcmd.Write(*cfg)
}

// setTokens makes the token file hold the admin's and controller
// manager's tokens and the given ones (token to user, all in
// system:masters). The API server reads the file when it starts.
func (c *faultCluster) setTokens(users map[string]string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tokens = map[string]string{adminToken: "admin", "kcm-token": "kcm"}
	for tok, user := range users {
		c.tokens[tok] = user
	}
	return c.writeTokensLocked()
}

func (c *faultCluster) writeTokensLocked() error {
	var b strings.Builder
	for tok, user := range c.tokens {
		fmt.Fprintf(&b, "%s,%s,%s,\"system:masters\"\n", tok, user, user)
	}
	return os.WriteFile(filepath.Join(c.tmp, "tokens.csv"), []byte(b.String()), 0o600)
}

func (c *faultCluster) startAPIServer() error {
	args := []string{
		"--etcd-servers=" + c.etcdURL(),
		"--bind-address=127.0.0.1", "--endpoint-reconciler-type=none", "--secure-port=" + strconv.Itoa(c.apiPort),
		"--tls-cert-file=" + filepath.Join(c.tmp, "serving.crt"), "--tls-private-key-file=" + filepath.Join(c.tmp, "serving.key"),
		"--token-auth-file=" + filepath.Join(c.tmp, "tokens.csv"), "--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(c.tmp, "sa.key"), "--service-account-signing-key-file=" + filepath.Join(c.tmp, "sa.key"),
		"--service-cluster-ip-range=10.98.0.0/16", "--disable-admission-plugins=ServiceAccount",
		"--cert-dir=" + filepath.Join(c.tmp, "certs"),
	}
	if c.watchOff {
		args = append(args, "--watch-cache=false")
	}
	var err error
	c.api, err = startProcess("kube-apiserver", filepath.Join(c.tmp, "apiserver.log"), filepath.Join(c.dir, "kube-apiserver"), args...)
	return err
}

// waitReady waits until the API server answers /readyz.
func (c *faultCluster) waitReady() error {
	return waitFor(2*time.Minute, c.name+"'s kube-apiserver", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := c.admin.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	})
}

// killAPIServer kills the API server, as a crash would.
func (c *faultCluster) killAPIServer() { c.api.kill(); c.api = nil }

// restartAPIServer starts the API server again, on the same port, and
// waits until it is ready.
func (c *faultCluster) restartAPIServer() error {
	if err := c.startAPIServer(); err != nil {
		return err
	}
	return c.waitReady()
}

func (c *faultCluster) startControllerManager() error {
	kc, err := c.kubeconfig("kcm-token", c.Host())
	if err != nil {
		return err
	}
	path := filepath.Join(c.tmp, "kcm.kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		return err
	}
	c.kcm, err = startProcess("kube-controller-manager", filepath.Join(c.tmp, "kcm.log"), filepath.Join(c.dir, "kube-controller-manager"),
		"--kubeconfig="+path, "--authentication-kubeconfig="+path, "--authorization-kubeconfig="+path,
		"--controllers=endpointslice,endpointslicemirroring,deployment,replicaset", "--leader-elect=false", "--secure-port=0",
		"--concurrent-service-endpoint-syncs=5", "--endpointslice-updates-batch-period=0s")
	return err
}

// revision is etcd's current revision: it counts every write to the
// cluster's objects.
func (c *faultCluster) revision() (int64, error) {
	var rng struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := c.etcdPost("/v3/kv/range", map[string]any{"key": base64.StdEncoding.EncodeToString([]byte("/registry/"))}, &rng); err != nil {
		return 0, err
	}
	rev, err := strconv.ParseInt(rng.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("etcd revision %q: %w", rng.Header.Revision, err)
	}
	return rev, nil
}

// etcdPost posts body to etcd's gRPC gateway and decodes the answer into
// out.
func (c *faultCluster) etcdPost(path string, body, out any) error {
	b, _ := json.Marshal(body)
	resp, err := c.http.Post(c.etcdURL()+path, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// compact compacts etcd at its current revision, so that every watch
// from an older resource version is answered 410 Gone, and returns that
// revision. It speaks to etcd's gRPC gateway.
func (c *faultCluster) compact() (int64, error) {
	rev, err := c.revision()
	if err != nil {
		return 0, err
	}
	var out map[string]any
	if err := c.etcdPost("/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}, &out); err != nil {
		return 0, err
	}
	return rev, nil
}
