package main

import (
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestCommandsOfReadsCLIAsKongDoes: at every level of the tree,
// commandsOf names the commands kong builds, in its order.
func TestCommandsOfReadsCLIAsKongDoes(t *testing.T) {
	exit := -1
	parser, err := newParser(new(CLI), &exit, io.Discard, io.Discard, whole)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *kong.Node, typ reflect.Type)
	walk = func(n *kong.Node, typ reflect.Type) {
		cs := commandsOf(typ)
		var want, got []string
		for _, c := range n.Children {
			want = append(want, c.Name)
		}
		for _, c := range cs {
			got = append(got, c.name)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: commandsOf = %q, kong's commands are %q", typ, got, want)
		}
		for i, c := range n.Children {
			walk(c, cs[i].typ)
		}
	}
	walk(parser.Model.Node, reflect.TypeFor[CLI]())
}

// TestNoCommandIsNamedAsAFlag: a parser that leaves a command out names
// its field as "Type.Field", which must not also name a flag of Type (see
// CLI).
func TestNoCommandIsNamedAsAFlag(t *testing.T) {
	var walk func(typ reflect.Type)
	walk = func(typ reflect.Type) {
		flags := flagFields(typ, nil)
		for _, c := range commandsOf(typ) {
			if slices.Contains(flags, c.field) {
				t.Errorf("%s.%s is a command and a flag", typ.Name(), c.field)
			}
			walk(c.typ)
		}
	}
	walk(reflect.TypeFor[CLI]())
}

// flagFields are the names of t's fields that are not commands, with the
// fields of the structs it embeds, as kong flattens them.
func flagFields(t reflect.Type, out []string) []string {
	for _, f := range exportedFields(t) {
		switch {
		case hasTag(f.Tag, "cmd"):
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			out = flagFields(f.Type, out)
		default:
			out = append(out, f.Name)
		}
	}
	return out
}

// TestGlobalsWithValues: scopeOf skips the value of each global flag that
// takes one, and only of those.
func TestGlobalsWithValues(t *testing.T) {
	for _, f := range exportedFields(reflect.TypeFor[Globals]()) {
		takesValue := f.Type.Kind() != reflect.Bool && f.Type != reflect.TypeFor[kong.VersionFlag]()
		if takesValue != slices.Contains(globalsWithValues, "--"+kongName(f.Name)) {
			t.Errorf("globalsWithValues is wrong about --%s", kongName(f.Name))
		}
	}
}

func TestScopeOf(t *testing.T) {
	for _, c := range []struct {
		args string
		want scope
		ok   bool
	}{
		{"--version", scope{path: "-"}, true},
		{"-v --version", scope{path: "-"}, true},
		{"", scope{path: "-"}, true},
		{"--help", scope{plain: true}, true},
		{"-vh", scope{plain: true}, true},
		{"--repo x --help", scope{plain: true}, true},
		{"graph show", scope{path: "graph show"}, true},
		{"graph --verbose show", scope{path: "graph"}, true},
		{"graph shw", scope{path: "graph"}, true},
		{"--repo check graph show --format json", scope{path: "graph show"}, true},
		{"--repo=x check --all", scope{path: "check"}, true},
		{"-h graph", scope{path: "graph"}, true},
		{"graph show --help", scope{path: "graph show"}, true},
		{"config validate", scope{path: "config validate"}, true},
		{"hooks check x", scope{path: "hooks check"}, true},
		{"check new", scope{path: "check"}, true},
		{"bogus", scope{}, false},
		{"--format json check", scope{}, false},
		{"-- check", scope{}, false},
	} {
		got, ok := scopeOf(strings.Fields(c.args))
		if got != c.want || ok != c.ok {
			t.Errorf("scopeOf(%q) = %+v, %v; want %+v, %v", c.args, got, ok, c.want, c.ok)
		}
	}
}
