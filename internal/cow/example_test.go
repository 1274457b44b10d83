package cow_test

import (
	"fmt"

	"github.com/meshreg/meshreg/internal/cow"
)

func ExampleMap() {
	var v1 cow.Map[string, int]
	e := v1.Edit()
	e.Set("a", 1)
	v2 := e.Done()

	e = v2.Edit()
	e.Set("b", 2)
	v3 := e.Done()

	_, inV2 := v2.Get("b")
	b, inV3 := v3.Get("b")
	fmt.Println(v1.Len(), v2.Len(), v3.Len(), inV2, inV3, b)
	// Output:
	// 0 1 2 false true 2
}
