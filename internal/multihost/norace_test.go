//go:build !race

package multihost

const raceBuild = false
