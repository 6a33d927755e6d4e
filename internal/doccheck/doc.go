// Package doccheck keeps the README and docs/ true to the code. Its tests
// read every fenced block of README.md and docs/*.md and
//   - check every command in a ```sh block: each wirespeed invocation
//     against its command's flags as the built binary's usage messages
//     list them, each `go test` against the packages, tests, benchmarks
//     and fuzz targets it names, `go install` and `go get` against the
//     module;
//   - run every ```sh block, unless a line <!-- doccheck: parse-only
//     (REASON) --> comes right before it, as a bash script in quick mode
//     (see [Specs.Script]): servers on free ports of 127.0.0.1, shorter
//     durations, fewer messages and connections, `go test` runs left to
//     the checks above; a file's blocks in order, in one directory;
//     <!-- doccheck: env (NAME=VALUE ...) --> sets variables the block's
//     quick mode uses (the text says which), <!-- doccheck: netns
//     (REASON) --> runs it as root in network and mount namespaces of its
//     own;
//   - check README.md's length, that its first 40 lines hold the set-up
//     commands, the docs' relative links, and that `go doc` prints at
//     most 50 lines before the first symbol of each package.
//
// A block that needs a program that is not installed is skipped, and
// fails under CI=true. With -short the blocks are checked, not run.
package doccheck
