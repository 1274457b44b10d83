package debughttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/meshreg/meshreg/debughttp"
	"github.com/meshreg/meshreg/registry/memory"
)

// Mount the handler under a prefix of your own mux.
func Example() {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		panic(err)
	}
	reg.AddService(memory.Service("reviews", "default").Port("http", 9080).Build())

	mux := http.NewServeMux()
	mux.Handle("/debug/registry/", http.StripPrefix("/debug/registry", debughttp.New(reg, debughttp.Options{})))

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/registry/services?limit=1", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	fmt.Println(rec.Code, len(body) > 0)
	// Output:
	// 200 true
}
