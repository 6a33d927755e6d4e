//go:build !unix

package smtpsinkcmd

import "github.com/wirespeed/wirespeed/internal/cli"

// dropPrivileges: -R and -u are for Unix systems.
func dropPrivileges(root, name string) error {
	if root == "" && name == "" {
		return nil
	}
	return cli.Usagef("-R and -u are supported on Unix systems only")
}
