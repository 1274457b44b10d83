package debughttp

import (
	"net/http"
	"time"

	"github.com/meshreg/meshreg/wds"
)

// Stream is one open xDS stream in /streams: an ADS stream of the xDS
// server (Options.XDS) or a WDS stream (Options.WDS).
type Stream struct {
	// Server is "xds" or "wds".
	Server string `json:"server"`
	// Node is the stream's node ID; Client its kind: "envoy", "grpc" or
	// "ztunnel".
	Node   string `json:"node"`
	Client string `json:"client"`
	// Variant is "sotw" (state of the world) or "delta".
	Variant string    `json:"variant"`
	Opened  time.Time `json:"opened"`
	// Types are the types it asked for.
	Types []StreamType `json:"types"`
}

// StreamType is what a stream asked for of one type and was sent.
type StreamType struct {
	Type       string `json:"type"`
	Wildcard   bool   `json:"wildcard"`
	Subscribed int    `json:"subscribed"`
	// Sent is the last response sent, Acked the last its client
	// acknowledged; absent for none.
	Sent  *StreamResponse `json:"sent,omitempty"`
	Acked *StreamResponse `json:"acked,omitempty"`
	// NACK is the message of the last rejection.
	NACK string `json:"nack,omitempty"`
	// Owed is when the oldest change not sent yet reached the view or
	// index; absent for none.
	Owed *time.Time `json:"owed,omitempty"`
}

// StreamResponse is one response sent.
type StreamResponse struct {
	Version   string    `json:"version"`
	Nonce     string    `json:"nonce"`
	Resources int       `json:"resources"`
	At        time.Time `json:"at"`
}

// streams answers /streams: the xDS server's streams, then WDS's; 404
// with neither.
func (h *handler) streams(w http.ResponseWriter, r *http.Request) {
	if h.opts.XDS == nil && h.opts.WDS == nil {
		http.Error(w, "no xDS or WDS server given (Options.XDS, Options.WDS)", http.StatusNotFound)
		return
	}
	var all []Stream
	if h.opts.XDS != nil {
		for _, st := range h.opts.XDS.Streams() {
			s := Stream{Server: "xds", Node: st.Node, Client: st.Client.String(), Variant: variant(st.Delta), Opened: st.Opened, Types: []StreamType{}}
			for _, t := range st.Types {
				s.Types = append(s.Types, StreamType{
					Type: t.TypeURL, Wildcard: t.Wildcard, Subscribed: t.Subscribed,
					Sent:  responseOf(t.Sent.Version, t.Sent.Nonce, t.Sent.Resources, t.Sent.At),
					Acked: responseOf(t.Acked.Version, t.Acked.Nonce, t.Acked.Resources, t.Acked.At),
					NACK:  t.NACK, Owed: timeOf(t.Owed),
				})
			}
			all = append(all, s)
		}
	}
	if h.opts.WDS != nil {
		for _, st := range h.opts.WDS.Streams() {
			all = append(all, Stream{Server: "wds", Node: st.Node, Client: "ztunnel", Variant: "delta", Opened: st.Opened, Types: []StreamType{{
				Type: wds.TypeURL, Wildcard: st.Wildcard, Subscribed: st.Subscribed,
				Sent:  responseOf(st.Sent.Version, st.Sent.Nonce, st.Sent.Resources, st.Sent.At),
				Acked: responseOf(st.Acked.Version, st.Acked.Nonce, st.Acked.Resources, st.Acked.At),
				NACK:  st.NACK, Owed: timeOf(st.Owed),
			}}})
		}
	}
	page, err := pageOf(h, r, all)
	if err != nil {
		badRequest(w, err)
		return
	}
	h.write(w, page)
}

func variant(delta bool) string {
	if delta {
		return "delta"
	}
	return "sotw"
}

// responseOf is a response's page entry; nil for none (no nonce).
func responseOf(version, nonce string, resources int, at time.Time) *StreamResponse {
	if nonce == "" {
		return nil
	}
	return &StreamResponse{Version: version, Nonce: nonce, Resources: resources, At: at}
}

func timeOf(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
