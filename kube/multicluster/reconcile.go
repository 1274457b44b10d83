package multicluster

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// owner is what the target holds of one cluster: the registries built
// from the kubeconfig of the Secret that declares it.
type owner struct {
	secret types.NamespacedName
	// kubeconfig is the one the cluster's Kubernetes registry (the
	// Factory's) was built from.
	kubeconfig []byte
	// workloadEntries says that the target holds the cluster's
	// WorkloadEntry registry, built from weKubeconfig.
	workloadEntries bool
	weKubeconfig    []byte
}

// reconcile brings the target in line with the Secrets. Each cluster is
// owned by the first Secret, by namespace and name, that declares it, so
// the outcome does not depend on event order. A cluster's registries are
// its Kubernetes registry and, unless SkipWorkloadEntries, its
// WorkloadEntry registry, which exists only beside the former: added
// after it, replaced when the kubeconfig changes, removed with it. The
// caller holds c.mu.
func (c *Controller) reconcile() {
	c.diags = map[types.NamespacedName][]model.Diagnostic{}
	want := c.wanted()
	// Remove the clusters no longer declared, then add or replace.
	for _, id := range sortedIDs(c.owners) {
		if _, ok := want[id]; !ok {
			c.removeCluster(id)
		}
	}
	for _, id := range sortedIDs(want) {
		w := want[id]
		if c.syncKube(id, w) && !c.opts.SkipWorkloadEntries {
			c.syncWorkloadEntries(id, w)
		}
	}
}

// wanted returns, per cluster, the Secret that owns it and its
// kubeconfig, and records the diagnostics of the entries left out. The
// caller holds c.mu.
func (c *Controller) wanted() map[model.ClusterID]owner {
	want := map[model.ClusterID]owner{}
	names := make([]types.NamespacedName, 0, len(c.secrets))
	for n := range c.secrets {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, n := range names {
		for _, id := range sortedIDs(c.secrets[n]) {
			switch prev, taken := want[id]; {
			case id == "":
				c.diag(n, "", "a data key is empty; it names no cluster and was ignored")
			case c.opts.LocalCluster != "" && id == c.opts.LocalCluster:
				c.diag(n, id, "names the local cluster; its registry is the caller's, and this entry was ignored")
			case taken:
				c.diag(n, id, fmt.Sprintf("cluster %s is already declared by Secret %s; this entry was ignored", id, prev.secret))
			default:
				want[id] = owner{secret: n, kubeconfig: c.secrets[n][id]}
			}
		}
	}
	return want
}

// removeCluster removes a cluster's registries from the target. The
// caller holds c.mu.
func (c *Controller) removeCluster(id model.ClusterID) {
	cur := c.owners[id]
	if err := c.target.Remove(model.Kubernetes, id); err != nil {
		c.opts.Logger.Warn("removing cluster registry", "cluster", string(id), "err", err)
	}
	if cur.workloadEntries {
		if err := c.target.Remove(model.External, id); err != nil {
			c.opts.Logger.Warn("removing cluster WorkloadEntry registry", "cluster", string(id), "err", err)
		}
	}
	delete(c.owners, id)
	c.opts.Logger.Info("cluster removed", "cluster", string(id))
}

// syncKube brings the cluster's Kubernetes registry to w's kubeconfig:
// built and added, or built and replaced when the kubeconfig changed. It
// reports whether the target holds the cluster's registry afterwards (a
// registry that cannot be built from a new kubeconfig leaves the previous
// one in place). The caller holds c.mu.
func (c *Controller) syncKube(id model.ClusterID, w owner) bool {
	cur, have := c.owners[id]
	cur.secret = w.secret
	if have && bytes.Equal(cur.kubeconfig, w.kubeconfig) {
		c.owners[id] = cur
		return true
	}
	reg, err := c.opts.Factory(id, w.kubeconfig)
	switch {
	case err != nil:
		c.diag(w.secret, id, fmt.Sprintf("cannot build the cluster's registry: %v; %s", err, keptOrSkipped(have)))
		return have
	case have:
		if err := c.target.Replace(reg); err != nil {
			c.diag(w.secret, id, fmt.Sprintf("cannot replace the cluster's registry: %v; the one there is kept", err))
			return true
		}
		c.opts.Logger.Info("cluster replaced", "cluster", string(id), "secret", w.secret.String())
	default:
		if err := c.target.Add(reg); err != nil {
			c.diag(w.secret, id, fmt.Sprintf("cannot add the cluster's registry: %v", err))
			return false
		}
		c.opts.Logger.Info("cluster added", "cluster", string(id), "secret", w.secret.String())
	}
	cur.kubeconfig = w.kubeconfig
	c.owners[id] = cur
	return true
}

// syncWorkloadEntries brings the cluster's WorkloadEntry registry to w's
// kubeconfig, as syncKube does the Kubernetes one. When the target
// refuses it (it holds an External registry of the cluster already, the
// caller's), that registry is left alone, with a diagnostic. The caller
// holds c.mu.
func (c *Controller) syncWorkloadEntries(id model.ClusterID, w owner) {
	cur := c.owners[id]
	if cur.workloadEntries && bytes.Equal(cur.weKubeconfig, w.kubeconfig) {
		return
	}
	reg, err := c.opts.WorkloadEntries(id, w.kubeconfig)
	switch {
	case err != nil:
		c.diag(w.secret, id, fmt.Sprintf("cannot build the cluster's WorkloadEntry registry: %v; %s", err, keptOrNotRead(cur.workloadEntries)))
		return
	case cur.workloadEntries:
		if err := c.target.Replace(reg); err != nil {
			c.diag(w.secret, id, fmt.Sprintf("cannot replace the cluster's WorkloadEntry registry: %v; the one there is kept", err))
			return
		}
		c.opts.Logger.Info("cluster WorkloadEntry registry replaced", "cluster", string(id), "secret", w.secret.String())
	default:
		if err := c.target.Add(reg); err != nil {
			c.diag(w.secret, id, fmt.Sprintf("cannot add the cluster's WorkloadEntry registry: %v; its WorkloadEntries are not read from this Secret", err))
			return
		}
		c.opts.Logger.Info("cluster WorkloadEntry registry added", "cluster", string(id), "secret", w.secret.String())
	}
	cur.workloadEntries, cur.weKubeconfig = true, w.kubeconfig
	c.owners[id] = cur
}

func keptOrSkipped(have bool) string {
	if have {
		return "the registry built from the previous kubeconfig is kept"
	}
	return "the cluster is not registered"
}

func keptOrNotRead(have bool) string {
	if have {
		return "the registry built from the previous kubeconfig is kept"
	}
	return "its WorkloadEntries are not read"
}

func (c *Controller) diag(secret types.NamespacedName, cluster model.ClusterID, msg string) {
	c.diags[secret] = append(c.diags[secret], model.Diagnostic{
		Severity: model.Error, Kind: "Secret", Namespace: secret.Namespace, Name: secret.Name,
		Cluster: cluster, Message: msg,
	})
}
