// Package syncreport logs what holds a registry's initial sync back: a
// registry (the kube and serviceentry controllers, the aggregate) runs
// Watch beside its work, and once the sync has taken longer than its
// Options.SyncReportInterval, Watch logs what the registry's
// PendingSync returns, and again every interval until it returns
// nothing. The debug pages and the metrics read PendingSync themselves.
package syncreport
