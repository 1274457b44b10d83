package kube

import (
	"errors"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// SharedInformer is what the controller needs of an informer it shares
// with the rest of a control plane: client-go's cache.SharedIndexInformer
// is one, and so is controller-runtime's cache.Informer.
type SharedInformer interface {
	AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error)
	RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error
}

// SharedInformers are a control plane's informers of the five kinds the
// controller reads, every one of them cluster-wide (Options.Informers),
// and optionally of the Gateway API's Gateways and GatewayClasses. The
// controller adds a handler to each when it runs and removes it when
// Run returns; it never starts, stops or writes to them, and never
// modifies an object they hold.
type SharedInformers struct {
	Services       SharedInformer
	EndpointSlices SharedInformer
	Pods           SharedInformer
	Nodes          SharedInformer
	Namespaces     SharedInformer

	// Gateways, when set, are the cluster's gateway.networking.k8s.io/v1
	// Gateways (a gateway-api informer factory's
	// Gateway().V1().Gateways().Informer()), read as with
	// Options.GatewayClient, which must then be nil: the controller
	// opens no Gateway watch of its own. GatewayClasses, optional with
	// them, are the GatewayClasses, whose labels and annotations a
	// Gateway's class lends it. The caller makes sure the cluster
	// serves the kinds. Default nil: Gateways as Options.GatewayClient
	// says.
	Gateways       SharedInformer
	GatewayClasses SharedInformer
}

// FactoryInformers returns the informers of the five kinds from a
// client-go SharedInformerFactory. Call it before the factory's Start, so
// that Start starts them; the factory must not be limited to a
// namespace.
func FactoryInformers(f informers.SharedInformerFactory) *SharedInformers {
	return &SharedInformers{
		Services:       f.Core().V1().Services().Informer(),
		EndpointSlices: f.Discovery().V1().EndpointSlices().Informer(),
		Pods:           f.Core().V1().Pods().Informer(),
		Nodes:          f.Core().V1().Nodes().Informer(),
		Namespaces:     f.Core().V1().Namespaces().Informer(),
	}
}

func (s *SharedInformers) validate() error {
	if s.Services == nil || s.EndpointSlices == nil || s.Pods == nil || s.Nodes == nil || s.Namespaces == nil {
		return errors.New("kube: Options.Informers needs all five informers: Services, EndpointSlices, Pods, Nodes and Namespaces")
	}
	if s.GatewayClasses != nil && s.Gateways == nil {
		return errors.New("kube: Options.Informers has GatewayClasses but no Gateways")
	}
	return nil
}

// sharedInformers returns the controller's informers over the caller's:
// the same kinds as its own informers', each handler behind stripping,
// since a shared informer holds its owner's objects whole.
func (c *Controller) sharedInformers(s *SharedInformers) []informer {
	shared := map[string]SharedInformer{
		servicesInformer: s.Services, endpointSlicesInformer: s.EndpointSlices, podsInformer: s.Pods,
		nodesInformer: s.Nodes, namespacesInformer: s.Namespaces,
	}
	var out []informer
	for _, k := range c.kinds() {
		out = append(out, informer{name: k.name, shared: shared[k.name], handler: stripping{strip: k.strip, h: k.handler}})
	}
	if s.Gateways != nil {
		out = append(out, informer{name: gatewaysInformer, shared: s.Gateways,
			handler: stripping{strip: c.stripGateway, h: c.gatewayHandler()}})
	}
	if s.GatewayClasses != nil {
		out = append(out, informer{name: gatewayClassesInformer, shared: s.GatewayClasses,
			handler: stripping{strip: stripGatewayClass, h: c.gatewayClassHandler()}})
	}
	return out
}

// stripping hands h each object as strip makes it, the controller's lean
// form, as a private informer's transform would have: a shared
// informer's objects are its owner's, and are read, never modified.
type stripping struct {
	strip cache.TransformFunc
	h     cache.ResourceEventHandler
}

func (s stripping) OnAdd(obj any, initial bool) { s.h.OnAdd(s.lean(obj), initial) }
func (s stripping) OnUpdate(_, obj any)         { s.h.OnUpdate(nil, s.lean(obj)) }
func (s stripping) OnDelete(obj any)            { s.h.OnDelete(s.lean(obj)) }

// lean returns obj's lean form; a tombstone's object is replaced in a
// copy of the tombstone.
func (s stripping) lean(obj any) any {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		tomb.Obj = s.lean(tomb.Obj)
		return tomb
	}
	out, err := s.strip(obj)
	if err != nil {
		return obj // the transforms never fail; the handler ignores what it does not know
	}
	return out
}

var _ SharedInformer = cache.SharedIndexInformer(nil)
