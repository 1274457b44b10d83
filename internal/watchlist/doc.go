// Package watchlist decides whether the informers meshreg builds over a
// client may use client-go's watch-list protocol, and marks their
// ListerWatchers accordingly.
//
// Since client-go v0.35 a reflector, by default (the WatchListClient
// feature), starts with a watch that streams the initial objects and
// ends them with a bookmark (annotated k8s.io/initial-events-end),
// instead of a list. It falls back to a list only when its
// ListerWatcher says the client does not support the protocol
// (IsWatchListSemanticsUnSupported) or the watch request fails. A fake
// clientset over client-go's object tracker (k8s.io/client-go/testing)
// sends no bookmark, so a reflector that streams from one waits for
// ever and its informer never syncs. client-go's own generated fakes
// say so (IsWatchListSemanticsUnSupported returns true); istio
// client-go's fake, and fakes generated before client-go v0.35, do not.
// Unsupported takes any fake over the tracker (testing.FakeClient) as
// unable, so that meshreg's informers list on every fake.
package watchlist
