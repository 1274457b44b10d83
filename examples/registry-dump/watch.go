package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/test/sources"
)

// watch prints every change until ctx is done. Manifest clusters are
// re-read when their files change.
func watch(ctx context.Context, b *sources.Built, o *options, w io.Writer) error {
	// The subscription first replays the state just printed, as events
	// marked Initial, which the printer skips.
	p := &eventPrinter{w: w, json: o.output != "table"}
	defer b.Aggregate.Subscribe(p)()

	t := time.NewTicker(time.Second)
	defer t.Stop()
	stamps := map[model.ClusterID]string{}
	for id, mc := range b.Manifests {
		stamps[id] = stamp(mc.Path())
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		for id, mc := range b.Manifests {
			s := stamp(mc.Path())
			if s == stamps[id] {
				continue
			}
			stamps[id] = s
			if err := mc.Reload(); err != nil {
				fmt.Fprintf(w, "cluster %s: %v\n", id, err)
			}
		}
	}
}

// stamp summarises the modification times and sizes of the files under
// path, so a change to any of them changes the stamp.
func stamp(path string) string {
	var s string
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			s += fmt.Sprintf("%s:%d:%d;", p, info.ModTime().UnixNano(), info.Size())
		}
		return nil
	})
	if s == "" {
		if info, err := os.Stat(path); err == nil {
			s = fmt.Sprint(info.ModTime().UnixNano(), info.Size())
		}
	}
	return s
}

// eventPrinter prints registry changes, one line each. Its handler calls
// come one at a time, so it needs no lock.
type eventPrinter struct {
	w    io.Writer
	json bool
}

type eventLine struct {
	Kind      string         `json:"kind"`
	Type      string         `json:"type,omitempty"`
	Service   string         `json:"service,omitempty"`
	Shard     string         `json:"shard,omitempty"`
	Endpoints int            `json:"endpoints"`
	Health    map[string]int `json:"health,omitempty"`
	Workload  string         `json:"workload,omitempty"`
	Gateways  []string       `json:"gateways,omitempty"`
}

func (p *eventPrinter) print(l eventLine) {
	if p.json {
		b, _ := json.Marshal(l)
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	switch l.Kind {
	case "service":
		fmt.Fprintf(p.w, "%s service %s\n", l.Type, l.Service)
	case "endpoints":
		fmt.Fprintf(p.w, "endpoints %s from %s: %d\n", l.Service, l.Shard, l.Endpoints)
	case "workload":
		fmt.Fprintf(p.w, "%s workload %s\n", l.Type, l.Workload)
	case "gateways":
		fmt.Fprintf(p.w, "network gateways: %d %s\n", len(l.Gateways), strings.Join(l.Gateways, " "))
	}
}

func (p *eventPrinter) OnService(e registry.ServiceEvent) {
	if e.Initial {
		return
	}
	p.print(eventLine{Kind: "service", Type: e.Type.String(), Service: e.Service().Key().String()})
}

func (p *eventPrinter) OnEndpoints(e registry.EndpointsEvent) {
	if e.Initial {
		return
	}
	h := map[string]int{}
	for _, ep := range e.Endpoints {
		h[ep.Health.String()]++
	}
	p.print(eventLine{Kind: "endpoints", Service: e.Service.String(), Shard: e.Shard.String(), Endpoints: len(e.Endpoints), Health: h})
}

func (p *eventPrinter) OnWorkload(e registry.WorkloadEvent) {
	if e.Initial {
		return
	}
	p.print(eventLine{Kind: "workload", Type: e.Type.String(), Workload: e.Workload().Key().String()})
}

func (p *eventPrinter) OnNetworkGateways(e registry.NetworkGatewaysEvent) {
	if e.Initial {
		return
	}
	gws := make([]string, len(e.Gateways))
	for i, g := range e.Gateways {
		gws[i] = g.String()
	}
	p.print(eventLine{Kind: "gateways", Gateways: gws})
}
