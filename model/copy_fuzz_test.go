package model_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshreg/meshreg/model"
)

// This file checks Equals and DeepCopy of every model type that has them,
// over values built field by field from fuzz input by reflection, so a
// field added to a type is covered without touching the test:
//
//   - a deep copy equals the original (both ways);
//   - it shares no mutable memory with it (no pointer, map or slice
//     backing array in common), found by walking both values;
//   - changing any single field, slice element or map entry of a copy
//     makes Equals false both ways, and leaves the original as it was.
//
// The seed corpus runs in plain `go test`; `go test -fuzz FuzzDeepCopyEquals
// ./model` explores further.

// subject is one model type under test, handled through pointers so that
// value types (ServiceTarget) and pointer types look alike.
type subject struct {
	name     string
	typ      reflect.Type // the pointed-to type
	deepCopy func(any) any
	equals   func(a, b any) bool
}

var subjects = []subject{
	{
		name:     "Service",
		typ:      reflect.TypeFor[model.Service](),
		deepCopy: func(v any) any { return v.(*model.Service).DeepCopy() },
		equals:   func(a, b any) bool { return a.(*model.Service).Equals(b.(*model.Service)) },
	},
	{
		name:     "Endpoint",
		typ:      reflect.TypeFor[model.Endpoint](),
		deepCopy: func(v any) any { return v.(*model.Endpoint).DeepCopy() },
		equals:   func(a, b any) bool { return a.(*model.Endpoint).Equals(b.(*model.Endpoint)) },
	},
	{
		name:     "WorkloadInstance",
		typ:      reflect.TypeFor[model.WorkloadInstance](),
		deepCopy: func(v any) any { return v.(*model.WorkloadInstance).DeepCopy() },
		equals:   func(a, b any) bool { return a.(*model.WorkloadInstance).Equals(b.(*model.WorkloadInstance)) },
	},
	{
		name:     "ServiceInstance",
		typ:      reflect.TypeFor[model.ServiceInstance](),
		deepCopy: func(v any) any { return v.(*model.ServiceInstance).DeepCopy() },
		equals:   func(a, b any) bool { return a.(*model.ServiceInstance).Equals(b.(*model.ServiceInstance)) },
	},
	{
		name: "ServiceTarget",
		typ:  reflect.TypeFor[model.ServiceTarget](),
		deepCopy: func(v any) any {
			c := v.(*model.ServiceTarget).DeepCopy()
			return &c
		},
		equals: func(a, b any) bool { return a.(*model.ServiceTarget).Equals(*b.(*model.ServiceTarget)) },
	},
}

func FuzzDeepCopyEquals(f *testing.F) {
	f.Add([]byte{})
	ascending := make([]byte, 256)
	for i := range ascending {
		ascending[i] = byte(i)
	}
	f.Add(ascending)
	f.Add([]byte(strings.Repeat("\xff", 512)))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 8 {
		b := make([]byte, 1024)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, sub := range subjects {
			checkSubject(t, sub, data)
		}
	})
}

func checkSubject(t *testing.T, sub subject, data []byte) {
	t.Helper()
	// Two independent values from the same input: twin is never copied or
	// mutated, and shows whether orig changed.
	orig, twin := build(sub.typ, data), build(sub.typ, data)
	if !sub.equals(orig, twin) {
		t.Fatalf("%s: two values built from the same input differ:\n%#v\n%#v", sub.name, orig, twin)
	}
	cp := sub.deepCopy(orig)
	if !sub.equals(orig, cp) || !sub.equals(cp, orig) {
		t.Fatalf("%s: DeepCopy differs from the original:\n%#v\n%#v", sub.name, orig, cp)
	}
	if shared := sharedMemory(orig, cp); len(shared) > 0 {
		t.Fatalf("%s: DeepCopy shares memory with the original at %v", sub.name, shared)
	}
	if missed := unnoticedChanges(orig, sub.deepCopy, sub.equals); len(missed) > 0 {
		t.Fatalf("%s: Equals still true after changing %v", sub.name, missed)
	}
	if !sub.equals(orig, twin) {
		t.Fatalf("%s: changing a deep copy changed the original:\n%#v\n%#v", sub.name, orig, twin)
	}
}

// unnoticedChanges changes each part of a fresh copy of v in turn and
// returns the paths of the changes that equals did not notice.
func unnoticedChanges(v any, deepCopy func(any) any, equals func(a, b any) bool) []string {
	var missed []string
	for i := 0; ; i++ {
		c := deepCopy(v)
		n := i
		path, ok := mutateNth(reflect.ValueOf(c).Elem(), &n, "")
		if !ok {
			return missed
		}
		if equals(v, c) || equals(c, v) {
			missed = append(missed, path)
		}
	}
}

// The test must be able to fail: a shallow copy shares memory, and an
// Equals that ignores fields misses changes.
func TestCopyCheckersCatchFaults(t *testing.T) {
	svc := build(reflect.TypeFor[model.Service](), []byte(strings.Repeat("\x07\x03", 400))).(*model.Service)
	shallow := *svc
	if shared := sharedMemory(svc, &shallow); len(shared) == 0 {
		t.Error("sharedMemory found nothing shared between a service and its shallow copy")
	}
	if shared := sharedMemory(svc, svc.DeepCopy()); len(shared) > 0 {
		t.Errorf("sharedMemory reports a deep copy sharing %v", shared)
	}
	hostOnly := func(a, b any) bool { return a.(*model.Service).Hostname == b.(*model.Service).Hostname }
	deepCopy := func(v any) any { return v.(*model.Service).DeepCopy() }
	missed := unnoticedChanges(svc, deepCopy, hostOnly)
	if !slices.Contains(missed, ".Ports") || !slices.Contains(missed, ".Labels") || slices.Contains(missed, ".Hostname") {
		t.Errorf("an Equals comparing only hostnames missed %v", missed)
	}
	// Every field of every type is reached.
	for _, sub := range subjects {
		paths := map[string]bool{}
		v := reflect.New(sub.typ).Interface()
		for i := 0; ; i++ {
			n := i
			path, ok := mutateNth(reflect.ValueOf(sub.deepCopy(v)).Elem(), &n, "")
			if !ok {
				break
			}
			paths[path] = true
		}
		for i := range sub.typ.NumField() {
			if f := sub.typ.Field(i); f.IsExported() && !reachedField(paths, "."+f.Name) {
				t.Errorf("%s: no change reaches field %s", sub.name, f.Name)
			}
		}
	}
}

func reachedField(paths map[string]bool, prefix string) bool {
	for p := range paths {
		if p == prefix || strings.HasPrefix(p, prefix+".") || strings.HasPrefix(p, prefix+"[") {
			return true
		}
	}
	return false
}

// Nil and empty lists and maps are equal, except a service's selector,
// where nil selects nothing and empty selects everything.
func TestEqualsNilAndEmpty(t *testing.T) {
	a := &model.Service{Hostname: "h"}
	b := &model.Service{Hostname: "h", Ports: []model.Port{}, Labels: map[string]string{}, ExportTo: []string{}}
	if !a.Equals(b) {
		t.Error("a service with nil lists differs from one with empty lists")
	}
	b = &model.Service{Hostname: "h", Selector: map[string]string{}}
	if a.Equals(b) || b.Equals(a) {
		t.Error("a nil selector equals an empty one")
	}
	if !b.Equals(b.DeepCopy()) || b.DeepCopy().Selector == nil {
		t.Error("DeepCopy turned an empty selector into nil")
	}
	var nilSvc *model.Service
	if !nilSvc.Equals(nil) || nilSvc.Equals(a) || a.Equals(nil) || nilSvc.DeepCopy() != nil {
		t.Error("nil services compare or copy wrongly")
	}
	var nilEp *model.Endpoint
	if !nilEp.Equals(nil) || nilEp.Equals(&model.Endpoint{}) || nilEp.DeepCopy() != nil {
		t.Error("nil endpoints compare or copy wrongly")
	}
}

// opaque types are immutable values whose internals (a time zone, an
// interned address zone) may be shared.
func opaque(t reflect.Type) bool {
	switch t {
	case reflect.TypeFor[time.Time](), reflect.TypeFor[netip.Addr](), reflect.TypeFor[netip.Prefix]():
		return true
	}
	return false
}

// source turns fuzz input into values; exhausted, it yields zeros.
type source struct{ data []byte }

func (s *source) byte() byte {
	if len(s.data) == 0 {
		return 0
	}
	b := s.data[0]
	s.data = s.data[1:]
	return b
}

func (s *source) uint64() uint64 {
	var v uint64
	for range 8 {
		v = v<<8 | uint64(s.byte())
	}
	return v
}

func (s *source) string() string {
	const alphabet = "abcxyz019-./*:"
	b := make([]byte, s.byte()%7)
	for i := range b {
		b[i] = alphabet[int(s.byte())%len(alphabet)]
	}
	return string(b)
}

// build returns a pointer to a new value of type t filled from data.
func build(t reflect.Type, data []byte) any {
	v := reflect.New(t)
	fill(&source{data: data}, v.Elem(), 0)
	return v.Interface()
}

func fill(s *source, v reflect.Value, depth int) {
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Unix(int64(s.uint64()%(1<<40)), 0).UTC()))
		return
	case reflect.TypeFor[netip.Addr]():
		v.Set(reflect.ValueOf(fuzzAddr(s)))
		return
	case reflect.TypeFor[netip.Prefix]():
		a := fuzzAddr(s)
		v.Set(reflect.ValueOf(netip.PrefixFrom(a, int(s.byte())%(a.BitLen()+1))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s.string())
	case reflect.Bool:
		v.SetBool(s.byte()&1 == 1)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(s.uint64())
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		v.SetInt(int64(s.uint64()))
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(s, v.Field(i), depth)
			}
		}
	case reflect.Pointer:
		if s.byte()%4 == 0 || depth > 3 {
			return // nil
		}
		p := reflect.New(v.Type().Elem())
		fill(s, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		b := s.byte()
		if b%5 == 0 {
			return // nil
		}
		n := int(b % 4) // 0 to 3 elements; 0 is empty but not nil
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fill(s, v.Index(i), depth+1)
		}
	case reflect.Map:
		b := s.byte()
		if b%5 == 0 {
			return // nil
		}
		m := reflect.MakeMap(v.Type())
		for range int(b % 4) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(s, k, depth+1)
			fill(s, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	default:
		panic(fmt.Sprintf("fill: unhandled kind %s of %s", v.Kind(), v.Type()))
	}
}

func fuzzAddr(s *source) netip.Addr {
	if s.byte()%3 == 0 {
		var b [16]byte
		for i := range b {
			b[i] = s.byte()
		}
		return netip.AddrFrom16(b)
	}
	return netip.AddrFrom4([4]byte{s.byte(), s.byte(), s.byte(), s.byte()})
}

// mutateNth makes the *n-th change (counting from 0) that can be made to
// v, in a fixed walk order, and returns its path. It returns false, with
// *n reduced by the number of changes available, when v offers fewer.
// The changes: every scalar changes value; every slice gains an element;
// every map gains a key; a nil pointer becomes non-nil; and the same, in
// turn, inside every struct field, pointer, slice element and map value.
func mutateNth(v reflect.Value, n *int, path string) (string, bool) {
	leaf := func(change func()) (string, bool) {
		if *n == 0 {
			change()
			return path, true
		}
		*n--
		return "", false
	}
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		return leaf(func() { v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Second))) })
	case reflect.TypeFor[netip.Addr]():
		return leaf(func() { v.Set(reflect.ValueOf(otherAddr(v.Interface().(netip.Addr)))) })
	case reflect.TypeFor[netip.Prefix]():
		return leaf(func() {
			p := v.Interface().(netip.Prefix)
			if !p.IsValid() {
				p = netip.MustParsePrefix("10.0.0.0/8")
			} else if p.Bits() > 0 {
				p = netip.PrefixFrom(p.Addr(), p.Bits()-1)
			} else {
				p = netip.PrefixFrom(p.Addr(), 1)
			}
			v.Set(reflect.ValueOf(p))
		})
	}
	switch v.Kind() {
	case reflect.String:
		return leaf(func() { v.SetString(v.String() + "~") })
	case reflect.Bool:
		return leaf(func() { v.SetBool(!v.Bool()) })
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return leaf(func() { v.SetUint(v.Uint() + 1) })
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		return leaf(func() { v.SetInt(v.Int() + 1) })
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if p, ok := mutateNth(v.Field(i), n, path+"."+v.Type().Field(i).Name); ok {
				return p, true
			}
		}
		return "", false
	case reflect.Pointer:
		if v.IsNil() {
			return leaf(func() { v.Set(reflect.New(v.Type().Elem())) })
		}
		return mutateNth(v.Elem(), n, path)
	case reflect.Slice:
		if p, ok := leaf(func() { v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem())) }); ok {
			return p, true
		}
		for i := range v.Len() {
			if p, ok := mutateNth(v.Index(i), n, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
		return "", false
	case reflect.Map:
		if p, ok := leaf(func() { addMapKey(v) }); ok {
			return p, true
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			if p, ok := mutateNth(e, n, fmt.Sprintf("%s[%v]", path, k)); ok {
				v.SetMapIndex(k, e)
				return p, true
			}
		}
		return "", false
	}
	panic(fmt.Sprintf("mutateNth: unhandled kind %s of %s", v.Kind(), v.Type()))
}

func otherAddr(a netip.Addr) netip.Addr {
	if !a.IsValid() {
		return netip.MustParseAddr("192.0.2.1")
	}
	if next := a.Next(); next.IsValid() {
		return next
	}
	return a.Prev()
}

// addMapKey adds a key not yet in the map (which may be nil: then it
// becomes a one-entry map). Map keys of the model are strings.
func addMapKey(v reflect.Value) {
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	kt := v.Type().Key()
	for i := 0; ; i++ {
		k := reflect.ValueOf(fmt.Sprintf("new-key-%d", i)).Convert(kt)
		if !v.MapIndex(k).IsValid() {
			v.SetMapIndex(k, reflect.New(v.Type().Elem()).Elem())
			return
		}
	}
}

// sharedMemory walks a and b, two values of the same type, side by side
// and returns the paths where they share a pointer target, a map, or part
// of a slice's backing array.
func sharedMemory(a, b any) []string {
	var out []string
	walkShared(reflect.ValueOf(a), reflect.ValueOf(b), "", &out)
	return out
}

func walkShared(a, b reflect.Value, path string, out *[]string) {
	if opaque(a.Type()) {
		return
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			*out = append(*out, path+" (pointer)")
			return
		}
		walkShared(a.Elem(), b.Elem(), path, out)
	case reflect.Struct:
		for i := range a.NumField() {
			walkShared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name, out)
		}
	case reflect.Slice:
		if a.Cap() > 0 && b.Cap() > 0 {
			size := a.Type().Elem().Size()
			aLo, bLo := a.Pointer(), b.Pointer()
			aHi, bHi := aLo+uintptr(a.Cap())*size, bLo+uintptr(b.Cap())*size
			if aLo < bHi && bLo < aHi {
				*out = append(*out, path+" (slice)")
				return
			}
		}
		for i := range min(a.Len(), b.Len()) {
			walkShared(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Map:
		if a.IsNil() || b.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			*out = append(*out, path+" (map)")
			return
		}
		for _, k := range a.MapKeys() {
			if bv := b.MapIndex(k); bv.IsValid() {
				walkShared(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k), out)
			}
		}
	case reflect.Interface:
		if !a.IsNil() && !b.IsNil() && a.Elem().Type() == b.Elem().Type() {
			walkShared(a.Elem(), b.Elem(), path, out)
		}
	}
}
