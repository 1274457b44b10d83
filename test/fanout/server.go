package fanout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/wds"
	"github.com/meshreg/meshreg/xds"
)

// ClusterID is the world's cluster: Istio's default.
const ClusterID = "Kubernetes"

// Server is the library's control plane over a world, as the README
// builds one: a kube controller on a fake API holding the world, the
// aggregate, the proxy view and the address index, and the xDS and WDS
// servers on one gRPC service, with Istio's defaults.
type Server struct {
	client    *kubefake.Clientset
	agg       *aggregate.Controller
	view      *proxyview.View
	idx       *address.Index
	proxies   *xds.Server
	workloads *wds.Server
}

// NewServer returns a server of the world's objects; log may be nil.
func NewServer(objs []runtime.Object, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The simple fake keeps no managed fields: a write costs the tracker
	// little, so that a change's CPU is the control plane's (as the
	// registry benchmarks write into the tracker).
	s := &Server{client: kubefake.NewSimpleClientset()} //nolint:staticcheck // see above
	for _, o := range objs {
		if err := s.client.Tracker().Add(o); err != nil {
			return nil, fmt.Errorf("world: %w", err)
		}
	}
	kc, err := kube.New(s.client, kube.Options{ClusterID: ClusterID, Logger: log})
	if err != nil {
		return nil, err
	}
	if s.agg, err = aggregate.New(aggregate.Options{Logger: log}); err != nil {
		return nil, err
	}
	if err := s.agg.Add(kc); err != nil {
		return nil, err
	}
	if s.view, err = proxyview.New(s.agg, proxyview.Options{Logger: log}); err != nil {
		return nil, err
	}
	if s.idx, err = address.New(s.agg, address.Options{ConfigCluster: ClusterID, Logger: log}); err != nil {
		return nil, err
	}
	if s.proxies, err = xds.New(s.view, xds.Options{Logger: log}); err != nil {
		return nil, err
	}
	if s.workloads, err = wds.New(s.idx, wds.Options{Logger: log}); err != nil {
		return nil, err
	}
	return s, nil
}

// Ready reports whether the registry, the view and the index have
// synced.
func (s *Server) Ready() bool {
	return s.agg.HasSynced() && s.view.HasSynced() && s.idx.HasSynced()
}

// Apply creates or updates the objects of a YAML stream in the fake API.
func (s *Server) Apply(_ context.Context, yaml []byte) error {
	objs, err := manifest.Load(bytes.NewReader(yaml))
	if err != nil {
		return err
	}
	return Upsert(s.client, objs)
}

// Upsert creates or updates objects in a fake API.
func Upsert(client *kubefake.Clientset, objs []runtime.Object) error {
	for _, o := range objs {
		acc, err := meta.Accessor(o)
		if err != nil {
			return err
		}
		gvr, _ := meta.UnsafeGuessKindToResource(o.GetObjectKind().GroupVersionKind())
		err = client.Tracker().Update(gvr, o, acc.GetNamespace())
		if apierrors.IsNotFound(err) {
			err = client.Tracker().Add(o)
		}
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", o.GetObjectKind().GroupVersionKind().Kind, acc.GetNamespace(), acc.GetName(), err)
		}
	}
	return nil
}

// Run serves ADS on xdsLis and the control API on controlLis until ctx
// is done or a part fails.
func (s *Server) Run(ctx context.Context, xdsLis, controlLis net.Listener) error {
	gs := grpc.NewServer()
	wds.Mux{WDS: s.workloads, Other: s.proxies}.Register(gs)
	hs := &http.Server{Handler: ControlHandler(s.Ready, s.Apply), ReadHeaderTimeout: 10 * time.Second}
	g, ctx := errgroup.WithContext(ctx)
	for _, run := range []func(context.Context) error{s.agg.Run, s.view.Run, s.idx.Run, s.proxies.Run, s.workloads.Run} {
		g.Go(func() error { return run(ctx) })
	}
	g.Go(func() error { return ignoreClosed(gs.Serve(xdsLis)) })
	g.Go(func() error { return ignoreClosed(hs.Serve(controlLis)) })
	g.Go(func() error {
		<-ctx.Done()
		gs.Stop()
		return hs.Close()
	})
	return g.Wait()
}

func ignoreClosed(err error) error {
	if errors.Is(err, grpc.ErrServerStopped) || errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
