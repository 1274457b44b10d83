package kube

import (
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshreg/meshreg/model"
)

// Network gateways from the Kubernetes Gateway API, as Istio reads them:
// a Gateway labelled topology.istio.io/network is a gateway of that
// network at each of its spec addresses (of type IPAddress or Hostname),
// on each auto-passthrough TLS listener's port, and for HBONE on each
// HBONE listener's. Read only with Options.GatewayClient, and only when
// the cluster serves the Gateway API's v1 Gateways.

const (
	gatewayAPIGroupVersion = "gateway.networking.k8s.io/v1"
	gatewaysInformer       = "gateways"
	// remoteGatewayClass marks a Gateway that stands for a gateway the
	// control plane cannot reach the API server of: read only in the
	// config cluster (Options.ConfigCluster).
	remoteGatewayClass = "istio-remote"
	// annotationGatewayServiceAccount names a Gateway's service account.
	annotationGatewayServiceAccount = "gateway.istio.io/service-account"
	// listenerModeOption, as a TLS option of a listener, says
	// listenerModeAutoPassthrough.
	listenerModeOption          = "gateway.istio.io/listener-protocol"
	listenerModeAutoPassthrough = "auto-passthrough"
)

// gatewayAPIDiagnosticsOwner is the store's diagnostics owner of a failure
// to look for the Gateway API.
const gatewayAPIDiagnosticsOwner = "GatewayAPI"

// gatewayInfo is what the controller keeps of a Gateway: its key and the
// network gateways it declares.
type gatewayInfo struct {
	objectMeta
	gateways []model.NetworkGateway
}

// gatewayAPIServed reports whether the cluster serves v1 Gateways. An
// error other than the group being absent is returned.
func gatewayAPIServed(client gatewayclient.Interface) (bool, error) {
	list, err := client.Discovery().ServerResourcesForGroupVersion(gatewayAPIGroupVersion)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == "gateways" {
			return true, nil
		}
	}
	return false, nil
}

// newGatewayInformer returns the informer of the cluster's Gateways.
func (c *Controller) newGatewayInformer(client gatewayclient.Interface) informer {
	gws := client.GatewayV1().Gateways("")
	lw := listWatch(client, gws.List, gws.Watch, c.relists(gatewaysInformer))
	return newInformer(gatewaysInformer, lw, &gatewayv1.Gateway{}, c.opts.ResyncPeriod, c.stripGateway,
		handle(c, func(ch *changes) map[types.NamespacedName]*gatewayInfo { return ch.gateways }, nil))
}

// stripGateway turns a Gateway into its gatewayInfo.
func (c *Controller) stripGateway(obj any) (any, error) {
	gw, ok := obj.(*gatewayv1.Gateway)
	if !ok {
		return obj, nil
	}
	return &gatewayInfo{
		objectMeta: objectMeta{namespace: gw.Namespace, name: gw.Name, resourceVersion: gw.ResourceVersion},
		gateways:   gatewayAPIGateways(gw, c.opts.ClusterID, c.opts.ConfigCluster),
	}, nil
}

// gatewayAPIGateways returns the network gateways a Gateway declares.
// Its service account is the gateway.istio.io/service-account
// annotation, else the Gateway's name (with "-istio-remote" for that
// class), in its namespace.
func gatewayAPIGateways(gw *gatewayv1.Gateway, cluster model.ClusterID, configCluster bool) []model.NetworkGateway {
	network := gw.Labels[labelNetwork]
	if network == "" || (gw.Spec.GatewayClassName == remoteGatewayClass && !configCluster) {
		return nil
	}
	sa := gw.Annotations[annotationGatewayServiceAccount]
	if sa == "" {
		sa = gw.Name
		if gw.Spec.GatewayClassName == remoteGatewayClass {
			sa += "-" + remoteGatewayClass
		}
	}
	base := model.NetworkGateway{
		Network: model.NetworkID(network), Cluster: cluster,
		ServiceAccount: gw.Namespace + "/" + sa, Source: model.GatewayFromGateway,
	}
	var out []model.NetworkGateway
	for _, a := range gw.Spec.Addresses {
		if a.Type == nil || (*a.Type != gatewayv1.IPAddressType && *a.Type != gatewayv1.HostnameAddressType) {
			continue
		}
		g := base
		g.Address = a.Value
		for _, l := range gw.Spec.Listeners {
			if autoPassthrough(gw.Labels, l) {
				g.Port, g.HBONEPort = uint32(l.Port), 0
				out = append(out, g)
			}
			if l.Protocol == "HBONE" {
				g.Port, g.HBONEPort = uint32(l.Port), uint32(l.Port)
				out = append(out, g)
			}
		}
	}
	return model.SortGateways(out)
}

// autoPassthrough reports whether a listener passes mTLS through to the
// network's workloads: a TLS listener with the auto-passthrough listener
// mode, or, on a Gateway labelled with a network, a TLS listener on the
// gateway port (the networking.istio.io/gatewayPort label, else 15443).
func autoPassthrough(labels map[string]string, l gatewayv1.Listener) bool {
	if l.TLS == nil {
		return false
	}
	if string(l.TLS.Options[listenerModeOption]) == listenerModeAutoPassthrough {
		return true
	}
	if _, ok := labels[labelNetwork]; !ok {
		return false
	}
	want := strconv.Itoa(model.DefaultGatewayPort)
	if p, ok := labels[labelGatewayPort]; ok {
		want = p
	}
	return fmt.Sprint(l.Port) == want
}

// onGateway: the gateways.
func (c *Controller) onGateway(key types.NamespacedName, gw *gatewayInfo) {
	if gw == nil || len(gw.gateways) == 0 {
		if _, ok := c.cl.gatewayAPI[key]; !ok {
			return
		}
		delete(c.cl.gatewayAPI, key)
	} else {
		c.cl.gatewayAPI[key] = gw.gateways
	}
	c.markGateways()
}
