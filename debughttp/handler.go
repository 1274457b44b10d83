package debughttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/wds"
	"github.com/meshreg/meshreg/xds"
)

// Options configure the handler. The zero value is valid.
type Options struct {
	// View, when set, serves /proxy: a proxy's view of the registry.
	// Default: nil, no /proxy.
	View *proxyview.View
	// XDS and WDS, when set, serve /streams: the servers' open streams,
	// with what each was last sent and last acknowledged. Default: nil,
	// none.
	XDS *xds.Server
	WDS *wds.Server
	// PageSize is a page's length when the request gives no limit.
	// Default: 100.
	PageSize int
	// MaxPageSize bounds the limit a request may ask. Default: 1000.
	MaxPageSize int
	// MaxDumpEndpoints bounds the registries /dump writes whole: above
	// it, /dump answers 413 and the pages are the way to read. Default:
	// 20000.
	MaxDumpEndpoints int
	// Logger receives the handler's log records (responses it could not
	// write). Default: discard.
	Logger *slog.Logger
}

func (o Options) defaults() Options {
	if o.PageSize <= 0 {
		o.PageSize = 100
	}
	if o.MaxPageSize <= 0 {
		o.MaxPageSize = 1000
	}
	if o.PageSize > o.MaxPageSize {
		o.PageSize = o.MaxPageSize
	}
	if o.MaxDumpEndpoints <= 0 {
		o.MaxDumpEndpoints = 20000
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// handler serves the paths of the package doc.
type handler struct {
	reg  registry.Discovery
	opts Options
	mux  *http.ServeMux
}

// New returns the handler over reg.
func New(reg registry.Discovery, opts Options) http.Handler {
	h := &handler{reg: reg, opts: opts.defaults(), mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /{$}", h.index)
	h.mux.HandleFunc("GET /dump", h.dump)
	h.mux.HandleFunc("GET /services", h.services)
	h.mux.HandleFunc("GET /endpoints", h.endpoints)
	h.mux.HandleFunc("GET /workloads", h.workloads)
	h.mux.HandleFunc("GET /diagnostics", h.diagnostics)
	h.mux.HandleFunc("GET /gateways", h.gateways)
	h.mux.HandleFunc("GET /proxy", h.proxy)
	h.mux.HandleFunc("GET /sync", h.sync)
	h.mux.HandleFunc("GET /streams", h.streams)
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

var paths = []string{"/dump", "/services", "/endpoints", "/workloads", "/diagnostics", "/gateways", "/proxy", "/sync", "/streams"}

func (h *handler) index(w http.ResponseWriter, _ *http.Request) {
	h.write(w, map[string][]string{"paths": paths})
}

// Page is one page of a list.
type Page[T any] struct {
	Items []T `json:"items"`
	// Total is the length of the whole list; Next the offset of the next
	// page, absent on the last.
	Total int  `json:"total"`
	Next  *int `json:"next,omitempty"`
}

// pageOf cuts the page a request asks of a list, or returns a bad
// request error.
func pageOf[T any](h *handler, r *http.Request, all []T) (Page[T], error) {
	limit, err := intParam(r, "limit", h.opts.PageSize)
	if err != nil {
		return Page[T]{}, err
	}
	if limit < 1 || limit > h.opts.MaxPageSize {
		return Page[T]{}, fmt.Errorf("limit %d: want 1 to %d", limit, h.opts.MaxPageSize)
	}
	offset, err := intParam(r, "offset", 0)
	if err != nil {
		return Page[T]{}, err
	}
	if offset < 0 {
		return Page[T]{}, fmt.Errorf("offset %d: want 0 or more", offset)
	}
	p := Page[T]{Items: []T{}, Total: len(all)}
	if offset < len(all) {
		end := min(offset+limit, len(all))
		p.Items = all[offset:end]
		if end < len(all) {
			p.Next = &end
		}
	}
	return p, nil
}

func intParam(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s %q: not a number", name, v)
	}
	return n, nil
}

// badRequest answers 400 with the reason.
func badRequest(w http.ResponseWriter, err error) {
	http.Error(w, err.Error(), http.StatusBadRequest)
}

// write answers v as indented JSON.
func (h *handler) write(w http.ResponseWriter, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		h.opts.Logger.Error("debug response not encoded", "err", err)
		http.Error(w, "encoding the response failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(buf.Bytes()); err != nil {
		h.opts.Logger.Debug("debug response not written", "err", err)
	}
}
