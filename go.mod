module github.com/wirespeed/wirespeed

go 1.26
