// Package crinformers feeds meshreg's kube controller from a
// controller-runtime manager's cache: the informers the manager already
// runs for a control plane's own controllers, so that the cluster's
// Services, EndpointSlices, Pods, Nodes and Namespaces are watched and
// held once.
//
// The manager's cache must watch every namespace (no
// cache.Options.DefaultNamespaces), and its objects are the cache's,
// whole: the kube controller strips what it keeps into a lean form of
// its own and never modifies them. Call KubeInformers before the manager
// starts, so that the manager starts the informers:
//
//	informers, err := crinformers.KubeInformers(ctx, mgr.GetCache())
//	kc, err := kube.New(nil, kube.Options{ClusterID: "east", Informers: informers})
//	err = mgr.Add(manager.RunnableFunc(kc.Run)) // the manager runs and stops it
//
// examples/controller-runtime is a control plane that does so. The
// package imports controller-runtime; the kube package itself does not.
package crinformers
