package informertest_test

import (
	"fmt"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/meshreg/meshreg/internal/informertest"
)

func Example() {
	factory := informers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	pods := informertest.NewCounting(factory.Core().V1().Pods().Informer())
	reg, _ := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{})
	fmt.Println(pods.Handlers())
	_ = pods.RemoveEventHandler(reg)
	fmt.Println(pods.Handlers())
	// Output:
	// 1
	// 0
}
