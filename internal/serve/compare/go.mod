module github.com/wirespeed/wirespeed/internal/serve/compare

go 1.26.0

// The engines wirespeed's serve engines are compared with, kept out of the
// wirespeed module's requirements. This module is never installed with
// go install: wirespeed serve and bench net build it from the checkout.
replace github.com/wirespeed/wirespeed => ../../..

require (
	github.com/cloudwego/netpoll v0.7.2
	github.com/panjf2000/gnet/v2 v2.9.7
	github.com/tidwall/evio v1.0.8
	github.com/wirespeed/wirespeed v0.0.0-00010101000000-000000000000
)

require (
	github.com/bytedance/gopkg v0.1.1 // indirect
	github.com/cloudwego/gopkg v0.1.4 // indirect
	github.com/kavu/go_reuseport v1.5.0 // indirect
	github.com/panjf2000/ants/v2 v2.11.3 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.27.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.2.1 // indirect
)
