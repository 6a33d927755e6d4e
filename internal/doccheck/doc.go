// Package doccheck keeps the README and docs/ true to the code. Its tests
// read every fenced block of README.md and docs/*.md, wherever it stands
// (in a list item, a block quote), as GitHub does (the Markdown parser is
// github.com/yuin/goldmark), parse each ```sh block as bash does
// (mvdan.cc/sh/v3/syntax: a here-document's body is text, not commands),
// and
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
//     commands, the docs' relative links of every form (inline, with a
//     title, reference-style, images) and their anchors, and that `go doc`
//     prints at most 50 lines before the first symbol of each package;
//   - check that the library's graph (textproto, dot) is the standard
//     library, golang.org/x/sys and golang.org/x/text: these parsers are
//     for the tests of this package only.
//
// A block that needs a program that is not installed is skipped, and
// fails under CI=true. With -short the blocks are checked, not run.
package doccheck
