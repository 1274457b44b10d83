package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/meshreg/meshreg/model"
)

// Default listen addresses: loopback only.
const (
	defaultXDSAddr   = "127.0.0.1:15010"
	defaultDebugAddr = "127.0.0.1:15014"
)

// clusterSource is one cluster's source: manifests or a kubeconfig.
type clusterSource struct {
	Name       model.ClusterID
	Manifests  string
	Kubeconfig string
}

// config is the parsed command line.
type config struct {
	xdsAddr, debugAddr string
	clusters           []clusterSource
	domainSuffix       string
	trustDomain        string
	namespaceSelector  string
	verbose            bool
}

// usageError is a problem with the command line: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// clusterFlag collects NAME=PATH values of one kind.
type clusterFlag struct {
	into *[]clusterSource
	live bool
	// defaultName is used when a value has no NAME= part; "" requires one.
	defaultName string
}

func (f clusterFlag) String() string { return "" }

func (f clusterFlag) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok {
		if f.defaultName == "" {
			return fmt.Errorf("want NAME=PATH, got %q", v)
		}
		name, path = f.defaultName, v
	}
	if name == "" || path == "" {
		return fmt.Errorf("want NAME=PATH, got %q", v)
	}
	c := clusterSource{Name: model.ClusterID(name)}
	if f.live {
		c.Kubeconfig = path
	} else {
		c.Manifests = path
	}
	*f.into = append(*f.into, c)
	return nil
}

// parseFlags parses the command line. -h prints the usage to stderr and
// returns flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("xds-server", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by the caller
	fs.StringVar(&c.xdsAddr, "xds-addr", defaultXDSAddr, "xDS gRPC listen `address`")
	fs.StringVar(&c.debugAddr, "debug-addr", defaultDebugAddr, "debug HTTP listen `address`")
	fs.Var(clusterFlag{into: &c.clusters}, "cluster", "manifests for a cluster, `NAME=PATH` (file or directory); repeatable")
	fs.Func("f", "manifests for one cluster named Kubernetes, `PATH`", func(v string) error {
		return clusterFlag{into: &c.clusters, defaultName: "Kubernetes"}.Set(v)
	})
	fs.Var(clusterFlag{into: &c.clusters, live: true, defaultName: "Kubernetes"}, "kubeconfig", "watch a live cluster, `[NAME=]PATH`; repeatable")
	fs.StringVar(&c.domainSuffix, "domain-suffix", model.DefaultDomainSuffix, "service hostname `suffix`")
	fs.StringVar(&c.trustDomain, "trust-domain", model.DefaultTrustDomain, "SPIFFE trust `domain`")
	fs.StringVar(&c.namespaceSelector, "namespace-selector", "", "only namespaces whose labels match this label `selector`")
	fs.BoolVar(&c.verbose, "v", false, "log to stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "usage: xds-server [flags]\n\nFlags:")
			fs.PrintDefaults()
			return nil, err
		}
		return nil, usageError{err}
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Errorf("unexpected argument %q (manifests go after -f or -cluster)", fs.Arg(0))}
	}
	return c, nil
}
