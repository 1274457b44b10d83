package wds

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/model"
)

// encoded is a resource as streams send it: its message, version and
// wire form. Its Any is shared by every response that carries it and
// never modified.
type encoded struct {
	addr    *workloadapi.Address
	version string
	any     *anypb.Any
}

// encoder encodes each resource once for all streams: the index's
// messages are immutable, so an encoding holds as long as the key
// names the same message.
type encoder struct {
	// mu guards byKey.
	mu    sync.Mutex
	byKey map[string]encoded
}

func newEncoder() *encoder { return &encoder{byKey: map[string]encoded{}} }

// encode returns the encoding of the resource a with the given key.
func (e *encoder) encode(key string, a *workloadapi.Address) (encoded, error) {
	e.mu.Lock()
	c, ok := e.byKey[key]
	e.mu.Unlock()
	if ok && c.addr == a {
		return c, nil
	}
	c, err := encode(a)
	if err != nil {
		return encoded{}, fmt.Errorf("resource %s: %w", key, err)
	}
	e.mu.Lock()
	e.byKey[key] = c
	e.mu.Unlock()
	return c, nil
}

// encode marshals a deterministically; its version is the hex FNV-64a
// hash of those bytes, so an unchanged resource keeps its version
// across generations, streams and server restarts.
func encode(a *workloadapi.Address) (encoded, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(a)
	if err != nil {
		return encoded{}, err
	}
	h := fnv.New64a()
	h.Write(b)
	return encoded{addr: a, version: hex.EncodeToString(h.Sum(nil)), any: &anypb.Any{TypeUrl: TypeURL, Value: b}}, nil
}

// forget drops the encodings of deleted resources, and when the cache
// has grown well beyond the snapshot (a stream behind the others can put
// back an encoding the snapshot no longer holds), every encoding the
// snapshot does not hold.
func (e *encoder) forget(snap *address.Snapshot, events []address.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range events {
		if ev.Type == model.EventDelete {
			delete(e.byKey, ev.Key)
		}
	}
	if len(e.byKey) <= 2*snap.Len()+64 {
		return
	}
	for k, c := range e.byKey {
		if snap.Get(k) != c.addr {
			delete(e.byKey, k)
		}
	}
}
