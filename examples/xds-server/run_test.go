package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRunExitStatus(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		args   []string
		want   int
		stderr string
	}{
		{"help", []string{"-h"}, 0, "usage: xds-server"},
		{"bad flag", []string{"-nope"}, 2, "xds-server: flag provided but not defined: -nope (see -h)"},
		{"unreadable manifests", []string{"-cluster", "east=./absent"}, 2, "cluster east: stat ./absent: no such file"},
		{"bad selector", []string{"-namespace-selector", "a in ("}, 2, "-namespace-selector"},
		// registry-dump's demo manifests build and serve.
		{"manifests", []string{"-xds-addr", "127.0.0.1:0", "-debug-addr", "127.0.0.1:0",
			"-cluster", "east=../registry-dump/demo/east.yaml", "-cluster", "west=../registry-dump/demo/west.yaml"}, 0, ""},
		{"bad address", []string{"-xds-addr", "127.0.0.1:notaport"}, 1, "xds-server: xds listener:"},
		// With its context already done, the command starts and stops at
		// once, cleanly.
		{"stops on context", []string{"-xds-addr", "127.0.0.1:0", "-debug-addr", "127.0.0.1:0"}, 0, ""},
		{"warns beyond loopback", []string{"-xds-addr", "127.0.0.1:0", "-debug-addr", "0.0.0.0:0"}, 0, "warning: listening on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := run(cancelled, tt.args, &stderr); got != tt.want {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tt.args, got, tt.want, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("run(%q) stderr = %q, want it to contain %q", tt.args, stderr.String(), tt.stderr)
			}
		})
	}
}
