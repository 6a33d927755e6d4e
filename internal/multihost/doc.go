// Package multihost runs wirespeed's multi-host load recipe for real, in
// its tests: a server in one network namespace, two load generators
// (tcpperf, smtp-source) in two others, each writing its HdrHistogram
// interval log, and `wirespeed tcpperf merge` of the logs checked against
// one histogram of all their samples. It has no code of its own.
package multihost
