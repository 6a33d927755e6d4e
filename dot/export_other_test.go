//go:build !amd64 || purego

package dot

func kernelAvailable(id kernelID) bool { return id == kGeneric }

func setKernel(kernelID) (restore func()) { return func() {} }
