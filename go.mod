module github.com/wirespeed/wirespeed

go 1.26.0

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/emersion/go-sasl v0.0.0-20241020182733-b788ff22d5a6
	github.com/minio/md5-simd v1.1.2
	github.com/ncruces/go-strftime v1.1.0
	github.com/yuin/goldmark v1.8.7
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
	golang.org/x/text v0.44.0
	mvdan.cc/sh/v3 v3.14.1
)

require github.com/klauspost/cpuid/v2 v2.4.2 // indirect
