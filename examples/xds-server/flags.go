package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/meshreg/meshreg/test/sources"
)

// Default listen addresses: loopback only.
const (
	defaultXDSAddr   = "127.0.0.1:15010"
	defaultDebugAddr = "127.0.0.1:15014"
)

// config is the parsed command line.
type config struct {
	xdsAddr, debugAddr string
	sources            sources.Flags
	verbose            bool
	// resolve holds the gateway host names -resolve answers.
	resolve staticResolver
}

// usageError is a problem with the command line: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// parseFlags parses the command line. -h prints the usage to stderr and
// returns flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("xds-server", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by the caller
	fs.StringVar(&c.xdsAddr, "xds-addr", defaultXDSAddr, "xDS gRPC listen `address`")
	fs.StringVar(&c.debugAddr, "debug-addr", defaultDebugAddr, "debug HTTP listen `address`")
	c.sources.Register(fs)
	fs.BoolVar(&c.verbose, "v", false, "log to stderr")
	fs.Var(&c.resolve, "resolve", "resolve the network gateway host `NAME=IP[,IP...]` to these IPs without DNS (repeatable; other names are looked up as usual)")
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
