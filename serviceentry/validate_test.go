package serviceentry

import (
	"strings"
	"testing"
)

const seHead = `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: se, namespace: ns}
spec:
`

func TestValidateServiceEntry(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec string
		want []string // substrings of the error, in order; none for valid
	}{
		{name: "valid static", spec: "  hosts: [a.com]\n  resolution: STATIC\n  ports: [{number: 80, name: http, protocol: HTTP}]\n  endpoints: [{address: 1.2.3.4}, {address: 'unix:///s.sock'}, {network: n2}]\n"},
		{name: "valid dns wildcard with endpoints", spec: "  hosts: ['*.a.com']\n  resolution: DNS\n  endpoints: [{address: b.com}]\n"},
		{name: "valid cidr and ipv6", spec: "  hosts: [a.com]\n  addresses: [10.0.0.0/8, '2001:db8::1', '2001:db8::/64']\n"},
		{name: "no hosts", spec: "  resolution: NONE\n", want: []string{"hosts: none given"}},
		{name: "bad hosts", spec: "  hosts: ['*', 'a..b', 'x*.com', 'a.com', 'a.com']\n", want: []string{`"*" alone`, `"a..b"`, `"x*.com"`, `"a.com": duplicate`}},
		{name: "long label", spec: "  hosts: [" + strings.Repeat("a", 64) + ".com]\n", want: []string{"1 to 63"}},
		{name: "ports", spec: "  hosts: [a.com]\n  ports: [{number: 0, name: a}, {number: 80, name: a}, {number: 80, name: b}, {number: 81, name: c, targetPort: 70000}, {number: 82, name: d, protocol: nope}]\n",
			want: []string{"ports[0]: number 0 out of range", "ports[1]: duplicate name", "ports[2]: duplicate number 80", "ports[3]: targetPort 70000", `ports[4]: unknown protocol "nope"`}},
		{name: "static non-IP", spec: "  hosts: [a.com]\n  resolution: STATIC\n  endpoints: [{address: b.com}]\n", want: []string{"resolution STATIC needs an IP"}},
		{name: "selector and endpoints", spec: "  hosts: [a.com]\n  resolution: STATIC\n  workloadSelector: {labels: {a: b}}\n  endpoints: [{address: 1.1.1.1}]\n", want: []string{"workloadSelector: not allowed together with endpoints"}},
		{name: "none with endpoints", spec: "  hosts: [a.com]\n  endpoints: [{address: 1.1.1.1}]\n", want: []string{"not allowed with resolution NONE"}},
		{name: "bad addresses", spec: "  hosts: [a.com]\n  addresses: [10.0.0.0/40, foo, 'fe80::1%eth0']\n", want: []string{"bad CIDR", "neither an IP nor a CIDR", "zoned"}},
		{name: "endpoint without address or network", spec: "  hosts: [a.com]\n  resolution: STATIC\n  endpoints: [{labels: {a: b}}]\n", want: []string{"neither an address nor a network"}},
		{name: "unix endpoint with ports", spec: "  hosts: [a.com]\n  resolution: STATIC\n  ports: [{number: 80, name: http}]\n  endpoints: [{address: 'unix:///x', ports: {http: 1}}]\n", want: []string{"not allowed with unix socket"}},
		{name: "endpoint port unknown", spec: "  hosts: [a.com]\n  resolution: STATIC\n  ports: [{number: 80, name: http}]\n  endpoints: [{address: 1.1.1.1, ports: {zz: 1, aa: 70000}}]\n", want: []string{`"aa": 70000 out of range`, `port "aa" is not a port`, `port "zz" is not a port`}},
		{name: "dynamic dns", spec: "  hosts: [a.com]\n  resolution: DYNAMIC_DNS\n", want: []string{"DYNAMIC_DNS is not supported"}},
		{name: "wildcard dns without endpoints", spec: "  hosts: ['*.a.com']\n  resolution: DNS_ROUND_ROBIN\n", want: []string{"cannot be resolved by DNS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validateServiceEntry(loadSE(t, seHead+tc.spec))
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			msg, at := err.Error(), 0
			for _, w := range tc.want {
				i := strings.Index(msg[at:], w)
				if i < 0 {
					t.Fatalf("error %q lacks %q (in order)", msg, w)
				}
				at += i
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
		})
	}
}

func TestValidateWorkloadEntry(t *testing.T) {
	head := "apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: {name: we, namespace: ns}\nspec:\n"
	for _, tc := range []struct{ name, spec, want string }{
		{name: "ip", spec: "  address: 10.0.0.1\n  ports: {http: 8080}\n"},
		{name: "dns name", spec: "  address: vm.example.com\n"},
		{name: "unix", spec: "  address: unix:///var/run/s.sock\n"},
		{name: "network only", spec: "  network: n1\n"},
		{name: "nothing", spec: "  labels: {a: b}\n", want: "neither an address nor a network"},
		{name: "bad address", spec: "  address: 'a b'\n", want: "neither an IP, a DNS name nor a unix:// path"},
		{name: "empty unix", spec: "  address: 'unix://'\n", want: "empty unix socket path"},
		{name: "port zero", spec: "  address: 10.0.0.1\n  ports: {http: 0}\n", want: `"http": 0 out of range`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validateWorkloadEntry(loadWE(t, head+tc.spec))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}
