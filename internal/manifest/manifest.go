package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	istioscheme "istio.io/client-go/pkg/clientset/versioned/scheme"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	gatewayscheme "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/scheme"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

// DefaultMaxFileSize is the size above which a manifest file is refused
// when Loader.MaxFileSize is 0: 8 MiB.
const DefaultMaxFileSize = 8 << 20

// Loader decodes manifests. The zero value is ready to use with the
// documented defaults; a Loader is safe for concurrent use.
type Loader struct {
	// MaxFileSize is the largest input, in bytes, Load accepts; a larger
	// one is refused whole. Default (0): DefaultMaxFileSize.
	MaxFileSize int64
	// MaxExpandedSize bounds a document's size after its YAML aliases are
	// expanded, counted as the bytes of its scalars plus one per node; a
	// document over it is refused. Default (0): the effective MaxFileSize.
	MaxExpandedSize int64
}

func (l Loader) defaults() Loader {
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = DefaultMaxFileSize
	}
	if l.MaxExpandedSize <= 0 {
		l.MaxExpandedSize = l.MaxFileSize
	}
	return l
}

// ErrTooLarge is wrapped by the error for input over Loader.MaxFileSize.
var ErrTooLarge = errors.New("manifest too large")

// ErrExpansion is wrapped by a DocumentError for a document whose aliases
// expand past Loader.MaxExpandedSize.
var ErrExpansion = errors.New("document expands past the size limit through YAML aliases")

// DocumentError is a document Load could not decode. The other documents
// of the input are unaffected.
type DocumentError struct {
	// File is the file name, "" for a plain reader.
	File string
	// Document is the document's position in its input, from 1.
	Document int
	// Kind is the document's apiVersion and kind as far as they could be
	// read, e.g. "example.com/v1, Kind=Widget"; "" when unknown.
	Kind string
	// Err is the cause.
	Err error
}

func (e *DocumentError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "document %d", e.Document)
	if e.Kind != "" {
		fmt.Fprintf(&b, " (%s)", e.Kind)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *DocumentError) Unwrap() error { return e.Err }

// scheme holds every type Load decodes. It is built once and only read
// afterwards. Of the MCS API it knows the version the kube controller
// reads, v1alpha1 (Istio's): a document of another version is not
// loaded, with its error.
var codecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{kubescheme.AddToScheme, istioscheme.AddToScheme, gatewayscheme.AddToScheme, mcsv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err) // the generated schemes always register
		}
	}
	return serializer.NewCodecFactory(s)
}()

// Scheme-independent decoder; conversion is never needed.
var deserializer = codecs.UniversalDeserializer()

// Load decodes every document of r with the default Loader.
func Load(r io.Reader) ([]runtime.Object, error) { return Loader{}.Load(r) }

// LoadFile decodes every document of a file with the default Loader.
func LoadFile(path string) ([]runtime.Object, error) { return Loader{}.LoadFile(path) }

// LoadDir decodes every .yaml, .yml and .json file under dir with the
// default Loader.
func LoadDir(dir string) ([]runtime.Object, error) { return Loader{}.LoadDir(dir) }

// Load decodes every document of r, in order. When some documents cannot
// be decoded, it returns the others together with an error that joins one
// *DocumentError per skipped document (use errors.As, or DocumentErrors).
// Input over MaxFileSize, or that cannot be read, returns no objects.
func (l Loader) Load(r io.Reader) ([]runtime.Object, error) {
	return l.load(r, "")
}

// LoadFile is Load on a file; errors name the file.
func (l Loader) LoadFile(path string) ([]runtime.Object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return l.load(f, path)
}

// LoadDir loads every file named *.yaml, *.yml or *.json under dir,
// recursively, in lexical order. Document errors of all files are joined;
// a file that cannot be read or is too large is reported the same way and
// skipped.
func (l Loader) LoadDir(dir string) ([]runtime.Object, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && slices.Contains([]string{".yaml", ".yml", ".json"}, strings.ToLower(filepath.Ext(p))) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var objs []runtime.Object
	var errs []error
	for _, f := range files {
		o, err := l.LoadFile(f)
		objs = append(objs, o...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return objs, errors.Join(errs...)
}

// DocumentErrors returns the *DocumentErrors err holds.
func DocumentErrors(err error) []*DocumentError {
	var out []*DocumentError
	var walk func(error)
	walk = func(e error) {
		if de, ok := e.(*DocumentError); ok {
			out = append(out, de)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	return out
}

func (l Loader) load(r io.Reader, file string) ([]runtime.Object, error) {
	l = l.defaults()
	data, err := io.ReadAll(io.LimitReader(r, l.MaxFileSize+1))
	if err != nil {
		return nil, nameFile(file, err)
	}
	if int64(len(data)) > l.MaxFileSize {
		return nil, nameFile(file, fmt.Errorf("%w: over %d bytes", ErrTooLarge, l.MaxFileSize))
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	var errs []error
	for n := 1; ; n++ {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, &DocumentError{File: file, Document: n, Err: err})
			break
		}
		o, derr := l.decodeDocument(doc)
		if derr != nil {
			derr.File, derr.Document = file, n
			errs = append(errs, derr)
			continue
		}
		objs = append(objs, o...)
	}
	return objs, errors.Join(errs...)
}

func nameFile(file string, err error) error {
	if file == "" {
		return err
	}
	return fmt.Errorf("%s: %w", file, err)
}

// decodeDocument decodes one document: nothing for an empty one, the items
// of a v1 List, else the one object.
func (l Loader) decodeDocument(doc []byte) ([]runtime.Object, *DocumentError) {
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(doc, &root); err != nil {
		return nil, &DocumentError{Err: err}
	}
	if isEmpty(&root) {
		return nil, nil // empty, comments only, or null
	}
	kind := kindOf(&root)
	if size := expandedSize(&root, map[*yamlv3.Node]int64{}, l.MaxExpandedSize); size > l.MaxExpandedSize {
		return nil, &DocumentError{Kind: kind, Err: ErrExpansion}
	}
	obj, gvk, err := deserializer.Decode(doc, nil, nil)
	if err != nil {
		if gvk != nil && !gvk.Empty() {
			kind = gvk.String()
		}
		return nil, &DocumentError{Kind: kind, Err: err}
	}
	list, ok := obj.(*corev1.List)
	if !ok {
		return []runtime.Object{obj}, nil
	}
	out := make([]runtime.Object, 0, len(list.Items))
	for i, item := range list.Items {
		o, gvk, err := deserializer.Decode(item.Raw, nil, nil)
		if err != nil {
			k := ""
			if gvk != nil {
				k = gvk.String()
			}
			return nil, &DocumentError{Kind: k, Err: fmt.Errorf("List item %d: %w", i, err)}
		}
		out = append(out, o)
	}
	return out, nil
}

func isEmpty(root *yamlv3.Node) bool {
	if root.Kind == 0 || (root.Kind == yamlv3.DocumentNode && len(root.Content) == 0) {
		return true
	}
	n := root.Content[0]
	return root.Kind == yamlv3.DocumentNode && n.Kind == yamlv3.ScalarNode && n.Tag == "!!null"
}

// kindOf reads the apiVersion and kind of a document's top-level mapping
// for error messages.
func kindOf(root *yamlv3.Node) string {
	n := root
	if n.Kind == yamlv3.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yamlv3.MappingNode {
		return ""
	}
	var apiVersion, kind string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind != yamlv3.ScalarNode {
			continue
		}
		switch k.Value {
		case "apiVersion":
			apiVersion = v.Value
		case "kind":
			kind = v.Value
		}
	}
	switch {
	case kind == "" && apiVersion == "":
		return ""
	case apiVersion == "":
		return "Kind=" + kind
	}
	return apiVersion + ", Kind=" + kind
}

// expandedSize returns the size of n with aliases expanded: one per node
// plus the length of each scalar's value, counted once per appearance. It
// stops counting past limit, so a billion-laughs document costs no more
// than its parse.
func expandedSize(n *yamlv3.Node, memo map[*yamlv3.Node]int64, limit int64) int64 {
	if n == nil {
		return 0
	}
	if s, ok := memo[n]; ok {
		return s
	}
	memo[n] = limit + 1 // an alias cycle counts as too large
	var size int64 = 1
	switch n.Kind {
	case yamlv3.ScalarNode:
		size += int64(len(n.Value))
	case yamlv3.AliasNode:
		size += expandedSize(n.Alias, memo, limit)
	default:
		for _, c := range n.Content {
			size += expandedSize(c, memo, limit)
			if size > limit {
				break
			}
		}
	}
	if size > limit {
		size = limit + 1
	}
	memo[n] = size
	return size
}
