//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// scenario is one fault, injected while the workload churns.
type scenario struct {
	name string
	run  func(r *faultRun) error
}

func scenarios() []scenario {
	return []scenario{
		{"apiserver-restart", (*faultRun).restart},
		{"etcd-compaction", (*faultRun).compaction},
		{"stall", (*faultRun).stall},
		{"slow-network", (*faultRun).slowNetwork},
		{"remote-down-secret-rotated", (*faultRun).remoteDownRotated},
		{"remote-down-secret-readded", (*faultRun).remoteDownReadded},
	}
}

// restart kills the config cluster's API server mid-stream and starts it
// again: every watch breaks, and since the new server's watch cache
// begins at the current revision, the informers' resumed watches are
// answered 410 and they relist.
func (r *faultRun) restart() error {
	r.a.killAPIServer()
	time.Sleep(3 * time.Second)
	return r.a.restartAPIServer()
}

// compaction cuts the registry off the remote cluster, lets the workload
// change there, compacts etcd past every resource version the
// registry's watchers hold, checks that a watch from such a version is
// answered 410, and lets the registry back in.
func (r *faultRun) compaction() error {
	ctx := context.Background()
	old, err := r.b.admin.CoreV1().Pods(faultNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	r.pb.cut()
	defer r.pb.restore()
	time.Sleep(5 * time.Second)
	if _, err := r.b.compact(); err != nil {
		return fmt.Errorf("compacting etcd: %w", err)
	}
	return expectGone(ctx, r.b, old.ResourceVersion)
}

// expectGone checks that a watch of pods from rv is answered 410 Gone:
// the fault a watcher at rv meets.
func expectGone(ctx context.Context, c *faultCluster, rv string) error {
	w, err := c.admin.CoreV1().Pods(faultNS).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return nil
		}
		return fmt.Errorf("watch from %s: %w", rv, err)
	}
	defer w.Stop()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("watch from compacted %s ended without an error", rv)
			}
			if e.Type == watch.Error {
				if st := apierrors.FromObject(e.Object); apierrors.IsResourceExpired(st) || apierrors.IsGone(st) {
					return nil
				}
				return fmt.Errorf("watch from compacted %s: %v", rv, apierrors.FromObject(e.Object))
			}
		case <-timeout:
			return fmt.Errorf("watch from compacted %s: no 410 within 10s", rv)
		}
	}
}

// stall stops every byte between the registry and both servers, without
// closing a connection, for longer than a client takes to give up on
// one.
func (r *faultRun) stall() error {
	r.pa.stall()
	r.pb.stall()
	time.Sleep(stallTime)
	r.pa.release()
	r.pb.release()
	return nil
}

// slowNetwork holds every chunk of bytes to and from both servers for
// 150 ms, and refuses new connections to the remote one, for 15 s.
func (r *faultRun) slowNetwork() error {
	r.pa.setDelay(150 * time.Millisecond)
	r.pb.setDelay(150 * time.Millisecond)
	r.pb.refuse(true)
	time.Sleep(15 * time.Second)
	r.pb.refuse(false)
	r.pa.setDelay(0)
	r.pb.setDelay(0)
	return nil
}

// remoteDownRotated takes the remote API server down for a minute, and
// meanwhile rotates the credentials of its Secret: the server comes back
// refusing the old ones.
func (r *faultRun) remoteDownRotated() error {
	r.b.killAPIServer()
	if err := r.rotate(); err != nil {
		return err
	}
	time.Sleep(time.Minute)
	return r.b.restartAPIServer()
}

// remoteDownReadded takes the remote API server down, deletes its Secret
// and waits for the registry to drop the cluster, adds the Secret back,
// and brings the server back.
func (r *faultRun) remoteDownReadded() error {
	r.b.killAPIServer()
	if err := r.a.admin.CoreV1().Secrets(secretsNS).Delete(context.Background(), "remote-b", metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := waitFor(time.Minute, "the remote cluster to leave the registry", func() error {
		for _, reg := range r.reg.agg.Registries() {
			if reg.Cluster() == "b" {
				return errors.New("b is still there")
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := r.putSecret(); err != nil {
		return err
	}
	time.Sleep(10 * time.Second)
	return r.b.restartAPIServer()
}
