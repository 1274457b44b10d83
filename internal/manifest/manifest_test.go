package manifest_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"istio.io/api/networking/v1alpha3"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshreg/meshreg/internal/manifest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const seYAML = `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata:
  name: ext
  namespace: default
spec:
  hosts: [api.example.com]
  ports:
  - {number: 443, name: https, protocol: HTTPS}
  resolution: DNS
`

const svcYAML = `apiVersion: v1
kind: Service
metadata:
  name: reviews
  namespace: default
spec:
  ports:
  - port: 9080
    name: http
`

// kinds renders the decoded objects as "Kind/name" for comparison.
func kinds(objs []runtime.Object) string {
	var parts []string
	for _, o := range objs {
		m, err := metaOf(o)
		if err != nil {
			parts = append(parts, fmt.Sprintf("%T", o))
			continue
		}
		parts = append(parts, o.GetObjectKind().GroupVersionKind().Kind+"/"+m.GetName())
	}
	return strings.Join(parts, ",")
}

func metaOf(o runtime.Object) (metav1.Object, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, errors.New("no metadata")
	}
	return m, nil
}

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    string
		wantErr []string // substrings, one per document error, in order
	}{
		{name: "empty", in: "", want: ""},
		{name: "comments only", in: "# nothing\n---\n# still nothing\n", want: ""},
		{name: "one ServiceEntry", in: seYAML, want: "ServiceEntry/ext"},
		{name: "multi document", in: seYAML + "---\n" + svcYAML, want: "ServiceEntry/ext,Service/reviews"},
		{name: "leading separator and empty docs", in: "---\n---\n" + svcYAML + "---\n", want: "Service/reviews"},
		{
			name: "json",
			in:   `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"}}`,
			want: "Pod/p",
		},
		{
			name: "v1 List",
			in:   "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n- apiVersion: networking.istio.io/v1\n  kind: WorkloadEntry\n  metadata: {name: b}\n  spec: {address: 1.2.3.4}\n",
			want: "Pod/a,WorkloadEntry/b",
		},
		{
			name:    "unknown kind is reported, the rest kept",
			in:      seYAML + "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n---\n" + svcYAML,
			want:    "ServiceEntry/ext,Service/reviews",
			wantErr: []string{"document 2 (example.com/v1, Kind=Widget)"},
		},
		{
			name:    "missing kind",
			in:      "apiVersion: v1\nmetadata: {name: x}\n",
			wantErr: []string{"document 1 (v1"},
		},
		{
			name:    "bad yaml",
			in:      svcYAML + "---\nkind: [unclosed\n",
			want:    "Service/reviews",
			wantErr: []string{"document 2"},
		},
		{
			name:    "bad enum in spec",
			in:      strings.Replace(seYAML, "resolution: DNS", "resolution: SOMETIMES", 1),
			wantErr: []string{"document 1 (networking.istio.io/v1, Kind=ServiceEntry)"},
		},
		{
			name: "billion laughs",
			in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n" +
				"  a: &a [\"lollollollollollollollollollollollollollollollollollollol\"]\n" +
				"  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
				"  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n" +
				"  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n" +
				"  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\n  i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h,*h]\n",
			wantErr: []string{"expands past the size limit"},
		},
		{
			name: "small alias is fine",
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: &n cm}\ndata:\n  x: *n\n",
			want: "ConfigMap/cm",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := manifest.Load(strings.NewReader(tc.in))
			if got := kinds(objs); got != tc.want {
				t.Errorf("objects = %q, want %q", got, tc.want)
			}
			des := manifest.DocumentErrors(err)
			if len(des) != len(tc.wantErr) {
				t.Fatalf("document errors = %v, want %d matching %q", err, len(tc.wantErr), tc.wantErr)
			}
			for i, de := range des {
				if !strings.Contains(de.Error(), tc.wantErr[i]) {
					t.Errorf("error %d = %q, want it to contain %q", i, de.Error(), tc.wantErr[i])
				}
			}
		})
	}
}

func TestLoadTypedSpec(t *testing.T) {
	objs, err := manifest.Load(strings.NewReader(seYAML))
	if err != nil {
		t.Fatal(err)
	}
	se, ok := objs[0].(*networkingv1.ServiceEntry)
	if !ok {
		t.Fatalf("got %T, want *v1.ServiceEntry", objs[0])
	}
	if se.Spec.Resolution != v1alpha3.ServiceEntry_DNS || se.Spec.Ports[0].Number != 443 || se.Namespace != "default" {
		t.Errorf("spec not decoded: %v", &se.Spec)
	}
}

func TestLoadSizeLimit(t *testing.T) {
	in := svcYAML + "---\n" + svcYAML
	l := manifest.Loader{MaxFileSize: int64(len(in) - 1)}
	objs, err := l.Load(strings.NewReader(in))
	if !errors.Is(err, manifest.ErrTooLarge) || objs != nil {
		t.Fatalf("Load over the limit = %v, %v; want ErrTooLarge and nothing", objs, err)
	}
	l.MaxFileSize = int64(len(in))
	if objs, err := l.Load(strings.NewReader(in)); err != nil || len(objs) != 2 {
		t.Fatalf("Load at the limit = %d objects, %v", len(objs), err)
	}
}

func TestLoadFileAndDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.yaml", svcYAML)
	write("a.yml", seYAML)
	write("sub/c.json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`)
	write("sub/d.yaml", "apiVersion: x/v1\nkind: Nope\n")
	write("notes.txt", "not a manifest")

	objs, err := manifest.LoadDir(dir)
	if got, want := kinds(objs), "ServiceEntry/ext,Service/reviews,Pod/p"; got != want {
		t.Errorf("LoadDir objects = %q, want %q", got, want)
	}
	des := manifest.DocumentErrors(err)
	if len(des) != 1 || des[0].File != filepath.Join(dir, "sub/d.yaml") || des[0].Document != 1 || des[0].Kind != "x/v1, Kind=Nope" {
		t.Errorf("LoadDir errors = %v", err)
	}
	if _, err := manifest.LoadFile(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadFile(missing) = %v, want ErrNotExist", err)
	}
}

func TestSplitAndClientsets(t *testing.T) {
	objs, err := manifest.Load(strings.NewReader(seYAML + "---\n" + svcYAML))
	if err != nil {
		t.Fatal(err)
	}
	kube, istio := manifest.Split(objs)
	if kinds(kube) != "Service/reviews" || kinds(istio) != "ServiceEntry/ext" {
		t.Fatalf("Split = %q / %q", kinds(kube), kinds(istio))
	}
	ctx := t.Context()
	if _, err := manifest.KubeClientset(objs).CoreV1().Services("default").Get(ctx, "reviews", metav1.GetOptions{}); err != nil {
		t.Errorf("kube clientset: %v", err)
	}
	if _, err := manifest.IstioClientset(objs).NetworkingV1().ServiceEntries("default").Get(ctx, "ext", metav1.GetOptions{}); err != nil {
		t.Errorf("istio clientset: %v", err)
	}
	var _ *corev1.Service // the kube side holds typed core objects
}

func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		seYAML, svcYAML, seYAML + "---\n" + svcYAML, "", "---", "a: &a [*a]",
		"apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Pod}]",
		`{"apiVersion":"networking.istio.io/v1","kind":"WorkloadEntry","spec":{"ports":{"http":99999999999}}}`,
	} {
		f.Add([]byte(s))
	}
	l := manifest.Loader{MaxFileSize: 1 << 16}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := l.Load(strings.NewReader(string(data)))
		for _, o := range objs {
			if o == nil {
				t.Fatal("nil object")
			}
		}
		_ = err
	})
}
