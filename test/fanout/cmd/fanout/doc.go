// Command fanout drives the fan-out benchmark (package fanout).
//
//	fanout world [-namespaces 100] [-services 10] [-shared 200] [-endpoints 5] > world.yaml
//	fanout run [world flags] [-xds-addr 127.0.0.1:15010] [-control http://127.0.0.1:15014]
//	           [-sidecars 1000] [-ztunnels 20] [-burst 100] [-timeout 10m] [-v]
//	fanout table MESHREG.json... -- ISTIO.json...
//	fanout plot DIR... > plot.svg
//
// world prints the world's objects as YAML, for a server's -world; run,
// given the same world flags, connects the proxies to a server started
// on that world, applies the changes and prints the Report as JSON;
// table prints the medians of reports of the two systems and their
// ratios, as Markdown; plot draws the sidecars' p99 of the reports in
// each DIR (meshreg-*.json and istio-*.json, as run.sh writes them).
package main
