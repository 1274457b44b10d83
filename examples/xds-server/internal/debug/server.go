package debug

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/meshreg/meshreg/debughttp"
	"github.com/meshreg/meshreg/registry"
)

// NewHandler returns the debug server's handler over src, the
// library's pages (debughttp.Options: the proxy view, the xDS and WDS
// servers), the xDS server's nodes (nil for none) and prom,
// the Prometheus registry /metrics serves (nil for a new, empty one; see
// the package doc for its paths). The registry's pages are the library's
// debughttp handler, under /debug/registry/.
func NewHandler(src registry.Reader, pages debughttp.Options, nodes Nodes, prom *prometheus.Registry, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if pages.Logger == nil {
		pages.Logger = log
	}
	if prom == nil {
		prom = prometheus.NewRegistry()
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/registry/", http.StripPrefix("/debug/registry", debughttp.New(src, pages)))
	mux.HandleFunc("GET /debug/proxy", serveProxy(nodes, log))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !src.HasSynced() {
			http.Error(w, "not synced", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(prom, promhttp.HandlerOpts{}))
	return mux
}

// Serve serves h on lis until ctx is done, then shuts the server down,
// giving requests under way up to grace to finish. log may be nil.
func Serve(ctx context.Context, lis net.Listener, h http.Handler, grace time.Duration, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	log.Info("debug server listening", "addr", lis.Addr().String())
	select {
	case err := <-served:
		return fmt.Errorf("debug server on %s: %w", lis.Addr(), err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("debug server on %s: %w", lis.Addr(), err)
	}
	log.Info("debug server stopped")
	return nil
}

// writeValue writes v as indented JSON.
func writeValue(w http.ResponseWriter, log *slog.Logger, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		log.Error("debug response not encoded", "err", err)
		http.Error(w, "encoding the response failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(buf.Bytes()); err != nil {
		log.Debug("debug response not written", "err", err)
	}
}
