package kube

import (
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
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
	gatewayClassesInformer = "gatewayclasses"
	// listenerModeOption, as a TLS option of a listener, says
	// listenerModeAutoPassthrough.
	listenerModeOption          = "gateway.istio.io/listener-protocol"
	listenerModeAutoPassthrough = "auto-passthrough"
)

// gatewayAPIDiagnosticsOwner is the store's diagnostics owner of a failure
// to look for the Gateway API.
const gatewayAPIDiagnosticsOwner = "GatewayAPI"

// gatewayInfo is what the controller keeps of a Gateway: its lean form
// (without its class's labels and annotations, which publishGateway
// adds), the network gateways it declares, and what could not be read.
type gatewayInfo struct {
	objectMeta
	gw       *model.Gateway
	gateways []model.NetworkGateway
	diags    []model.Diagnostic
}

// gatewayClassInfo is what the controller keeps of a GatewayClass.
type gatewayClassInfo struct {
	objectMeta
	annotations map[string]string
}

// gatewayAPIServed reports whether the cluster serves v1 Gateways, and
// GatewayClasses. An error other than the group being absent is
// returned.
func gatewayAPIServed(client gatewayclient.Interface) (gateways, classes bool, err error) {
	list, err := client.Discovery().ServerResourcesForGroupVersion(gatewayAPIGroupVersion)
	if apierrors.IsNotFound(err) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	for _, r := range list.APIResources {
		gateways = gateways || r.Name == gatewaysInformer
		classes = classes || r.Name == gatewayClassesInformer
	}
	return gateways, classes, nil
}

// newGatewayInformer returns the informer of the cluster's Gateways.
func (c *Controller) newGatewayInformer(client gatewayclient.Interface) informer {
	gws := client.GatewayV1().Gateways("")
	lw := listWatch(client, gws.List, gws.Watch, c.relists(gatewaysInformer))
	return newInformer(gatewaysInformer, lw, &gatewayv1.Gateway{}, c.opts.ResyncPeriod, c.stripGateway, c.gatewayHandler())
}

func (c *Controller) gatewayHandler() cache.ResourceEventHandler {
	return handle(c, func(ch *changes) map[types.NamespacedName]*gatewayInfo { return ch.gateways }, nil)
}

// newGatewayClassInformer returns the informer of the cluster's
// GatewayClasses.
func (c *Controller) newGatewayClassInformer(client gatewayclient.Interface) informer {
	classes := client.GatewayV1().GatewayClasses()
	lw := listWatch(client, classes.List, classes.Watch, c.relists(gatewayClassesInformer))
	return newInformer(gatewayClassesInformer, lw, &gatewayv1.GatewayClass{}, c.opts.ResyncPeriod, stripGatewayClass, c.gatewayClassHandler())
}

func (c *Controller) gatewayClassHandler() cache.ResourceEventHandler {
	return handle(c, func(ch *changes) map[types.NamespacedName]*gatewayClassInfo { return ch.gatewayClasses }, nil)
}

// stripGateway turns a Gateway into its gatewayInfo.
func (c *Controller) stripGateway(obj any) (any, error) {
	gw, ok := obj.(*gatewayv1.Gateway)
	if !ok {
		return obj, nil
	}
	lean, diags := convertGateway(gw, c.opts.ClusterID)
	return &gatewayInfo{
		objectMeta: objectMeta{namespace: gw.Namespace, name: gw.Name, resourceVersion: gw.ResourceVersion},
		gw:         lean,
		gateways:   gatewayAPIGateways(lean, c.opts.ConfigCluster),
		diags:      diags,
	}, nil
}

// stripGatewayClass keeps a GatewayClass's name, labels and annotations.
func stripGatewayClass(obj any) (any, error) {
	gc, ok := obj.(*gatewayv1.GatewayClass)
	if !ok {
		return obj, nil
	}
	return &gatewayClassInfo{
		objectMeta:  objectMeta{name: gc.Name, resourceVersion: gc.ResourceVersion, labels: gc.Labels},
		annotations: keptAnnotations(gc.Annotations),
	}, nil
}

// lastAppliedAnnotation is kubectl's copy of the applied object, which
// nobody reads here and which can be large.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// keptAnnotations returns the annotations without kubectl's
// last-applied-configuration, nil when none are left.
func keptAnnotations(a map[string]string) map[string]string {
	if _, ok := a[lastAppliedAnnotation]; !ok {
		if len(a) == 0 {
			return nil
		}
		return a
	}
	out := make(map[string]string, len(a)-1)
	for k, v := range a {
		if k != lastAppliedAnnotation {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// convertGateway returns the lean form of a Gateway, and what it could
// not read: an allowedRoutes selector that is not a valid label selector
// selects no namespace.
func convertGateway(gw *gatewayv1.Gateway, cluster model.ClusterID) (*model.Gateway, []model.Diagnostic) {
	out := &model.Gateway{
		Cluster: cluster, Namespace: gw.Namespace, Name: gw.Name, Class: string(gw.Spec.GatewayClassName),
		Labels: gw.Labels, Annotations: keptAnnotations(gw.Annotations),
	}
	var diags []model.Diagnostic
	for _, l := range gw.Spec.Listeners {
		ml := model.GatewayListener{Name: string(l.Name), Port: uint32(l.Port), Protocol: string(l.Protocol)}
		if l.TLS != nil {
			ml.TLS = &model.GatewayTLS{}
			if l.TLS.Mode != nil {
				ml.TLS.Mode = string(*l.TLS.Mode)
			}
			for k, v := range l.TLS.Options {
				if ml.TLS.Options == nil {
					ml.TLS.Options = map[string]string{}
				}
				ml.TLS.Options[string(k)] = string(v)
			}
		}
		if ar := l.AllowedRoutes; ar != nil && ar.Namespaces != nil {
			if ar.Namespaces.From != nil {
				ml.AllowedRoutes.From = string(*ar.Namespaces.From)
			}
			if sel := ar.Namespaces.Selector; sel != nil {
				if ms, err := labelSelector(sel); err != nil {
					diags = append(diags, model.Diagnostic{Severity: model.Warning, Kind: "Gateway", Namespace: gw.Namespace,
						Name: gw.Name, Cluster: cluster,
						Message: fmt.Sprintf("listener %s: allowedRoutes namespace selector: %v; it selects no namespace", l.Name, err)})
				} else {
					ml.AllowedRoutes.Selector = ms
				}
			}
		}
		out.Listeners = append(out.Listeners, ml)
	}
	for _, a := range gw.Spec.Addresses {
		out.Addresses = append(out.Addresses, model.GatewayAddress{Type: addressType(a.Type), Value: a.Value})
	}
	for _, a := range gw.Status.Addresses {
		out.StatusAddresses = append(out.StatusAddresses, model.GatewayAddress{Type: addressType(a.Type), Value: a.Value})
	}
	return out, diags
}

// addressType is a Gateway address's type, "" when unset: Istio uses
// only addresses that say their type.
func addressType(t *gatewayv1.AddressType) string {
	if t == nil {
		return ""
	}
	return string(*t)
}

// labelSelector converts a label selector, which must be valid.
func labelSelector(sel *metav1.LabelSelector) (*model.LabelSelector, error) {
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		return nil, err
	}
	out := &model.LabelSelector{MatchLabels: sel.MatchLabels}
	for _, r := range sel.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, model.LabelRequirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values})
	}
	return out, nil
}

// gatewayAPIGateways returns the network gateways a Gateway declares.
// Its service account is the gateway.istio.io/service-account
// annotation, else the Gateway's name (with "-istio-remote" for that
// class), in its namespace.
func gatewayAPIGateways(gw *model.Gateway, configCluster bool) []model.NetworkGateway {
	network := gw.Labels[labelNetwork]
	if network == "" || (gw.Class == model.GatewayClassRemote && !configCluster) {
		return nil
	}
	base := model.NetworkGateway{
		Network: model.NetworkID(network), Cluster: gw.Cluster,
		ServiceAccount: gw.ServiceAccount(), Source: model.GatewayFromGateway,
	}
	var out []model.NetworkGateway
	for _, a := range gw.Addresses {
		if a.Type != model.IPAddressType && a.Type != model.HostnameType {
			continue
		}
		g := base
		g.Address = a.Value
		for _, l := range gw.Listeners {
			if autoPassthrough(gw.Labels, l) {
				g.Port, g.HBONEPort = l.Port, 0
				out = append(out, g)
			}
			if l.Protocol == "HBONE" {
				g.Port, g.HBONEPort = l.Port, l.Port
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
func autoPassthrough(labels map[string]string, l model.GatewayListener) bool {
	if l.TLS == nil {
		return false
	}
	if l.TLS.Options[listenerModeOption] == listenerModeAutoPassthrough {
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

// onGateway: the Gateway, and the network gateways when it declares
// some or did.
func (c *Controller) onGateway(key types.NamespacedName, gw *gatewayInfo) {
	if gw == nil {
		delete(c.cl.apiGateways, key)
	} else {
		c.cl.apiGateways[key] = gw
	}
	c.markGateway(key)
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

// onGatewayClass: the Gateways of the class.
func (c *Controller) onGatewayClass(key types.NamespacedName, gc *gatewayClassInfo) {
	if gc == nil {
		delete(c.cl.gatewayClasses, key.Name)
	} else {
		c.cl.gatewayClasses[key.Name] = gc
	}
	for k, gw := range c.cl.apiGateways {
		if gw.gw.Class == key.Name {
			c.markGateway(k)
		}
	}
}
