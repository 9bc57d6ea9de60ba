package starlark

import "github.com/the-loop/the-loop/graph"

// Resolve finds each declared module's file as Load would, and executes
// nothing: it is how a declaration is checked before anything of it runs.
// Files[i] names module i's file as Load's messages do (repository-relative
// for a path module, absolute for one on the hook path), "" where it could
// not be found. Faults holds every failure, not only the first: a file that
// is missing, not regular, reached through a symbolic link leading out, not
// a .star file, not on the hook path, or declared twice; each is a
// *graph.ConfigError at its declaration.
func Resolve(modules []Module, opts Options) (files []string, faults []error) {
	files = make([]string, len(modules))
	if len(modules) == 0 {
		return files, nil
	}
	h, err := newHost(opts)
	if err != nil {
		return files, []error{&graph.ConfigError{File: modules[0].File, Line: modules[0].Line, Key: keyModules, Msg: "cannot resolve repository hook modules", Err: err}}
	}
	sources, faults := h.loader().resolveAll(modules, true)
	for i, src := range sources {
		if src != nil {
			files[i] = src.name
		}
	}
	return files, faults
}
