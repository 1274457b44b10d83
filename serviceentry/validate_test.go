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

// checkProblems fails unless err holds each of wantErrs, in order, on one
// line (none: err is nil), and warnings hold each of wantWarnings.
func checkProblems(t *testing.T, warnings []string, err error, wantErrs, wantWarnings []string) {
	t.Helper()
	if len(wantErrs) == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	} else {
		if err == nil {
			t.Fatalf("no error, want %q", wantErrs)
		}
		msg, at := err.Error(), 0
		for _, w := range wantErrs {
			i := strings.Index(msg[at:], w)
			if i < 0 {
				t.Fatalf("error %q lacks %q (in order)", msg, w)
			}
			at += i
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("error spans lines: %q", msg)
		}
	}
	all := strings.Join(warnings, "\n")
	for _, w := range wantWarnings {
		if !strings.Contains(all, w) {
			t.Errorf("warnings %q lack %q", warnings, w)
		}
	}
	if len(wantWarnings) == 0 && len(wantErrs) == 0 && len(warnings) > 0 {
		t.Errorf("unexpected warnings %q", warnings)
	}
}

func TestValidateServiceEntry(t *testing.T) {
	http := "  ports: [{number: 80, name: http, protocol: HTTP}]\n"
	for _, tc := range []struct {
		name     string
		spec     string
		labels   string // metadata labels, as YAML flow map
		errs     []string
		warnings []string
	}{
		{name: "valid static", spec: "  hosts: [a.com]\n  addresses: [10.0.0.1]\n  resolution: STATIC\n" + http + "  endpoints: [{address: 1.2.3.4}, {address: 'unix:///s.sock'}, {address: 'unix://@abstract'}]\n"},
		{name: "valid dns wildcard with endpoints", spec: "  hosts: ['*.a.com']\n  resolution: DNS\n" + http + "  endpoints: [{address: b.com}]\n"},
		{name: "valid cidr and ipv6", spec: "  hosts: [a.com]\n  addresses: [10.0.0.0/8, '2001:db8::1', '2001:db8::/64', '::ffff:10.0.0.1']\n" + http},
		{name: "valid names", spec: "  hosts: [svc, Upper.Example.com, t.example.com., '*-x.example.com']\n  addresses: [10.0.0.1]\n  ports: [{number: 80, name: HTTP, protocol: HTTP}]\n", warnings: []string{"partial wildcard"}},
		{name: "no hosts", spec: "  resolution: NONE\n", errs: []string{"hosts: none given"}},
		{name: "bad hosts", spec: "  hosts: ['*', 'a..b', 'x.*.com', 'a_b.com', '-a.com', 1.2.3.4]\n", errs: []string{`"*" alone`, `"a..b"`, `"x.*.com"`, `"a_b.com"`, `"-a.com"`, `"4" is all digits`}},
		{name: "duplicate and partial wildcard hosts", spec: "  hosts: [a.com, a.com, '*b.com']\n  addresses: [10.0.0.1]\n" + http, warnings: []string{`"a.com" listed twice`, `"*b.com": a partial wildcard`}},
		{name: "long label", spec: "  hosts: [" + strings.Repeat("a", 64) + ".com]\n", errs: []string{"1 to 63"}},
		{name: "long name", spec: "  hosts: [" + strings.Repeat("a.", 128) + "com]\n", errs: []string{"longer than 255"}},
		{name: "ports", spec: "  hosts: [a.com]\n  ports: [{number: 0, name: a}, {number: 80, name: a}, {number: 80, name: b}, {number: 81, name: c, targetPort: 70000}, {number: 82, name: d, protocol: nope}, {number: 83, name: ''}, {number: 84, name: a_b}]\n",
			errs: []string{"ports[0]: number 0 out of range", "ports[1]: duplicate name", "ports[2]: duplicate number 80", "ports[3]: targetPort 70000", `ports[4]: unknown protocol "nope"`, `ports[5]: name "" is not a DNS-1123 label`, `ports[6]: name "a_b"`}},
		{name: "static non-IP", spec: "  hosts: [a.com]\n  resolution: STATIC\n" + http + "  endpoints: [{address: b.com}]\n", errs: []string{"resolution STATIC needs an IP"}},
		{name: "static network only", spec: "  hosts: [a.com]\n  addresses: [10.0.0.1]\n  resolution: STATIC\n" + http + "  endpoints: [{network: n2}]\n", warnings: []string{`reached through network "n2"`}},
		{name: "static unix", spec: "  hosts: [a.com]\n  resolution: STATIC\n  ports: [{number: 80, name: http, protocol: HTTP}, {number: 81, name: b, protocol: HTTP}]\n  endpoints: [{address: 'unix://rel/s.sock'}, {address: 'unix://'}]\n",
			errs: []string{"not an absolute path", "exactly one port", "empty unix socket path"}},
		{name: "selector and endpoints", spec: "  hosts: [a.com]\n  resolution: STATIC\n" + http + "  workloadSelector: {labels: {a: b}}\n  endpoints: [{address: 1.1.1.1}]\n", errs: []string{"workloadSelector: not allowed together with endpoints"}},
		{name: "selector labels", spec: "  hosts: [a.com]\n  resolution: STATIC\n" + http + "  workloadSelector: {labels: {'': x, app: 'web*'}}\n", errs: []string{"empty label key", "app=web*: wildcards"}},
		{name: "empty selector", spec: "  hosts: [a.com]\n  addresses: [10.0.0.1]\n  resolution: STATIC\n" + http + "  workloadSelector: {}\n", warnings: []string{"workloadSelector: no labels"}},
		{name: "none with endpoints", spec: "  hosts: [a.com]\n" + http + "  endpoints: [{address: 1.1.1.1}]\n", errs: []string{"not allowed with resolution NONE"}},
		{name: "none with selector", spec: "  hosts: [a.com]\n  addresses: [10.0.0.1]\n" + http + "  workloadSelector: {labels: {a: b}}\n", warnings: []string{"no use with resolution NONE"}},
		{name: "bad addresses", spec: "  hosts: [a.com]\n  addresses: [10.0.0.0/40, foo, a/b/c]\n" + http, errs: []string{"not a valid CIDR", `"foo": not a valid IP`, `"a/b/c": not a valid IP`}},
		{name: "zoned address", spec: "  hosts: [a.com]\n  addresses: ['fe80::1%eth0']\n" + http, warnings: []string{`zone "eth0" dropped`}},
		{name: "cidr with dns", spec: "  hosts: [a.com]\n  addresses: [10.0.0.0/8]\n  resolution: DNS\n" + http, errs: []string{"CIDR ranges need resolution NONE or STATIC, not DNS"}},
		{name: "endpoint without address or network", spec: "  hosts: [a.com]\n  resolution: STATIC\n" + http + "  endpoints: [{labels: {a: b}}]\n", errs: []string{"neither an address nor a network"}},
		{name: "endpoint labels", spec: "  hosts: [a.com]\n  resolution: STATIC\n" + http + "  endpoints: [{address: 1.1.1.1, labels: {'bad key!': v, k: '-v', 'example.com/ok': 'a.b_c', '': x}}]\n",
			errs: []string{`label key "" is not valid`, `label key "bad key!"`, `label "k": value "-v"`}},
		{name: "unix endpoint with ports", spec: "  hosts: [a.com]\n  resolution: STATIC\n" + http + "  endpoints: [{address: 'unix:///x', ports: {http: 1}}]\n", errs: []string{"not allowed with unix socket"}},
		{name: "endpoint port unknown", spec: "  hosts: [a.com]\n  resolution: STATIC\n" + http + "  endpoints: [{address: 1.1.1.1, ports: {zz: 1, aa: 70000, a_b: 1}}]\n",
			errs: []string{`port "a_b" is not a port`, `name "a_b" is not a DNS-1123 label`, `port "aa" is not a port`, `"aa": 70000 out of range`, `port "zz" is not a port`}},
		{name: "dns endpoints", spec: "  hosts: [a.com]\n  resolution: DNS\n" + http + "  endpoints: [{address: 'unix:///s.sock'}, {network: n2}, {address: b.com}, {address: 10.0.0.1}]\n",
			errs: []string{`endpoints[0]: address "unix:///s.sock": resolution DNS cannot resolve a unix socket`, `endpoints[1]: address: none given; resolution DNS`}},
		{name: "dns endpoint name", spec: "  hosts: [a.com]\n  resolution: DNS\n" + http + "  endpoints: [{address: 'b..com'}]\n", errs: []string{`address "b..com": resolution DNS needs an IP or a DNS name`}},
		{name: "dns round robin with two endpoints", spec: "  hosts: [a.com]\n  resolution: DNS_ROUND_ROBIN\n" + http + "  endpoints: [{address: b.com}, {address: c.com}]\n", errs: []string{"DNS_ROUND_ROBIN takes at most one, 2 given"}},
		{name: "wildcard dns without endpoints", spec: "  hosts: ['*.a.com']\n  resolution: DNS_ROUND_ROBIN\n" + http, errs: []string{"a wildcard host needs endpoints"}},
		{name: "wildcard dns with selector", spec: "  hosts: ['*.a.com']\n  resolution: DNS\n" + http + "  workloadSelector: {labels: {a: b}}\n", errs: []string{"a wildcard host needs endpoints"}},
		{name: "several hosts, TCP", spec: "  hosts: [a.com, b.com]\n  addresses: [10.0.0.1]\n  resolution: STATIC\n  ports: [{number: 80, name: http, protocol: HTTP}, {number: 5432, name: pg, protocol: TCP}]\n", errs: []string{`port "pg" is TCP`}},
		{name: "several hosts, unset protocol", spec: "  hosts: [a.com, b.com]\n  resolution: DNS\n  ports: [{number: 80, name: web}]\n", errs: []string{`port "web" is unset`}},
		{name: "several hosts, NONE", spec: "  hosts: [a.com, b.com]\n  addresses: [10.0.0.1]\n  ports: [{number: 5432, name: pg, protocol: TCP}]\n"},
		{name: "several hosts, DNS, address, TLS", spec: "  hosts: [a.com, b.com]\n  addresses: [10.0.0.1]\n  resolution: DNS\n  ports: [{number: 443, name: https, protocol: HTTPS}]\n", warnings: []string{"several hosts with addresses and a TCP port"}},
		{name: "TCP without addresses, opted out", labels: "{networking.istio.io/enable-autoallocate-ip: 'False'}", spec: "  hosts: [a.com]\n  resolution: STATIC\n  ports: [{number: 5432, name: pg, protocol: TCP}]\n", warnings: []string{"addresses: none, and none are allocated"}},
		{name: "TCP without addresses, NONE", spec: "  hosts: [a.com]\n  ports: [{number: 5432, name: pg}]\n", warnings: []string{"addresses: none, and none are allocated"}},
		{name: "TCP without addresses, allocated", spec: "  hosts: [a.com]\n  resolution: STATIC\n  ports: [{number: 5432, name: pg, protocol: TCP}]\n"},
		{name: "exportTo", spec: "  hosts: [a.com]\n  addresses: [10.0.0.1]\n" + http + "  exportTo: [ns, ., Bad_NS, x, x, '~', '*']\n",
			errs: []string{`"." and the entry's own namespace "ns"`, `"Bad_NS" is neither`, `"x" given twice`, `"*" (everywhere) together`, `"~" (nowhere) together`}},
		{name: "exportTo nowhere", spec: "  hosts: [a.com]\n  addresses: [10.0.0.1]\n" + http + "  exportTo: ['~']\n"},
		{name: "dynamic dns", spec: "  hosts: ['*.a.com']\n  resolution: DYNAMIC_DNS\n  ports: [{number: 443, name: tls, protocol: TLS}, {number: 80, name: http, protocol: HTTP}, {number: 81, name: h2, protocol: HTTP2}, {number: 82, name: grpc, protocol: GRPC}]\n"},
		{name: "dynamic dns partial wildcard", spec: "  hosts: ['*a.com']\n  resolution: DYNAMIC_DNS\n  ports: [{number: 443, name: tls, protocol: TLS}]\n"},
		{name: "dynamic dns rules", spec: "  hosts: [a.com, '*.b.com']\n  addresses: [10.0.0.1]\n  resolution: DYNAMIC_DNS\n  ports: [{number: 443, name: https, protocol: HTTPS}, {number: 5432, name: pg, protocol: TCP}]\n  endpoints: [{address: 10.0.0.1}]\n",
			errs: []string{`hosts: "a.com": resolution DYNAMIC_DNS needs wildcard hosts`, "addresses: not allowed with resolution DYNAMIC_DNS", "endpoints: not allowed with resolution DYNAMIC_DNS", "ports[0]: resolution DYNAMIC_DNS needs protocol", "ports[1]", `port "pg" is TCP`}},
		{name: "dynamic dns through a waypoint", labels: "{istio.io/use-waypoint: wp}", spec: "  hosts: ['*.a.com']\n  location: MESH_INTERNAL\n  resolution: DYNAMIC_DNS\n  ports: [{number: 443, name: tls, protocol: TLS}]\n", errs: []string{"cannot go through a waypoint"}},
		{name: "dynamic dns, no waypoint", labels: "{istio.io/use-waypoint: None}", spec: "  hosts: ['*.a.com']\n  location: MESH_INTERNAL\n  resolution: DYNAMIC_DNS\n  ports: [{number: 443, name: tls, protocol: TLS}]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := seHead
			if tc.labels != "" {
				head = strings.Replace(seHead, "namespace: ns}", "namespace: ns, labels: "+tc.labels+"}", 1)
			}
			warnings, err := validateServiceEntry(loadSE(t, head+tc.spec))
			checkProblems(t, warnings, err, tc.errs, tc.warnings)
		})
	}
}

func TestValidateWorkloadEntry(t *testing.T) {
	head := "apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: {name: we, namespace: ns}\nspec:\n"
	for _, tc := range []struct {
		name, spec   string
		err, warning string
	}{
		{name: "ip", spec: "  address: 10.0.0.1\n  ports: {http: 8080}\n"},
		{name: "dns name", spec: "  address: vm.example.com\n"},
		{name: "unix", spec: "  address: unix:///var/run/s.sock\n"},
		{name: "network only", spec: "  network: n1\n", warning: `reached through network "n1"`},
		{name: "nothing", spec: "  labels: {a: b}\n", err: "neither an address nor a network"},
		{name: "bad address", spec: "  address: 'a b'\n", err: "neither an IP, a DNS name nor a unix:// path"},
		{name: "numeric name", spec: "  address: '1.2.3'\n", err: "neither an IP, a DNS name nor a unix:// path"},
		{name: "empty unix", spec: "  address: 'unix://'\n", err: "empty unix socket path"},
		{name: "relative unix", spec: "  address: 'unix://a.sock'\n", err: "not an absolute path"},
		{name: "port zero", spec: "  address: 10.0.0.1\n  ports: {http: 0}\n", err: `"http": 0 out of range`},
		{name: "port name", spec: "  address: 10.0.0.1\n  ports: {web_ui: 80}\n", err: `name "web_ui" is not a DNS-1123 label`},
		{name: "label", spec: "  address: 10.0.0.1\n  labels: {app: 'a b'}\n", err: `label "app": value "a b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errs, warnings []string
			if tc.err != "" {
				errs = []string{tc.err}
			}
			if tc.warning != "" {
				warnings = []string{tc.warning}
			}
			w, err := validateWorkloadEntry(loadWE(t, head+tc.spec))
			checkProblems(t, w, err, errs, warnings)
		})
	}
}
