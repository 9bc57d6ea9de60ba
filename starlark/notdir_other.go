//go:build !unix

package starlark

import "errors"

var errNotDir = errors.New("not a directory")
