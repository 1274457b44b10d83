package serviceentry

import (
	"errors"

	istioinformers "istio.io/client-go/pkg/informers/externalversions"
	listersv1 "istio.io/client-go/pkg/listers/networking/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// SharedInformerOptions configure a NewSharedInformerSource.
type SharedInformerOptions struct {
	// Namespaces is a client-go factory of the same cluster, whose
	// Namespaces informer the source then reads, so that a Controller
	// can apply its NamespaceSelector. Default nil: the source holds no
	// namespaces, and a Controller with a NamespaceSelector refuses it.
	Namespaces informers.SharedInformerFactory
	// WorkloadEntriesOnly reads the WorkloadEntries alone, as
	// InformerOptions.WorkloadEntriesOnly does: the source takes no
	// ServiceEntry informer from the factory.
	WorkloadEntriesOnly bool
}

// NewSharedInformerSource returns a source over a control plane's own
// informers: ServiceEntries and WorkloadEntries from an istio client-go
// SharedInformerFactory (networking.istio.io/v1), and, when given, the
// Namespaces of a client-go one. Call it before the factories' Start, so
// that Start starts the informers it takes. Run adds the source's
// handlers and removes them when it returns; the factories' owner starts
// and stops the informers. The source reads the factory's objects whole
// (a shared cache cannot keep only what the source reads) and never
// modifies them.
func NewSharedInformerSource(f istioinformers.SharedInformerFactory, opts SharedInformerOptions) (*InformerSource, error) {
	if f == nil {
		return nil, errors.New("serviceentry: nil informer factory")
	}
	wes := f.Networking().V1().WorkloadEntries()
	s := &InformerSource{
		shared:   true,
		weLister: wes.Lister(),
		synced:   make(chan struct{}),
	}
	s.addCRD(KindWorkloadEntry, wes.Informer())
	if opts.WorkloadEntriesOnly {
		// No ServiceEntry informer: an empty lister answers.
		s.seLister = listersv1.NewServiceEntryLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}))
	} else {
		ses := f.Networking().V1().ServiceEntries()
		s.seLister = ses.Lister()
		s.addCRD(KindServiceEntry, ses.Informer())
	}
	if opts.Namespaces != nil {
		s.nsInf = opts.Namespaces.Core().V1().Namespaces().Informer()
		s.kinds = append(s.kinds, kindInformer{KindNamespace, s.nsInf})
	}
	return s, nil
}
