package kube

import "k8s.io/client-go/tools/cache"

// unwrap returns the object of an informer event as a T, unwrapping the
// tombstone (cache.DeletedFinalStateUnknown) an informer hands to a delete
// handler when it missed the delete itself. ok is false when obj is
// neither a T nor a tombstone holding one.
func unwrap[T any](obj any) (t T, ok bool) {
	if tomb, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
		obj = tomb.Obj
	}
	t, ok = obj.(T)
	return t, ok
}
