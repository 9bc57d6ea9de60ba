package main

import (
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// samePlainAsKong fails t when parsePlain accepts args and kong does not
// parse them to the same verb with the same values, global and the verb's.
// It reports whether parsePlain accepted them.
func samePlainAsKong(t testing.TB, args []string) bool {
	t.Helper()
	cli, verb, ok := parsePlain(args)
	if !ok {
		return false
	}
	want, ctx, exit, err := parseArgs(args, io.Discard, io.Discard)
	if err != nil || exit >= 0 || ctx == nil || ctx.Selected() == nil {
		t.Errorf("the-loop %s: parsePlain accepts it, kong: exit %d, %v", strings.Join(args, " "), exit, err)
		return true
	}
	sel := ctx.Selected().Target.Addr().Interface()
	if reflect.TypeOf(sel) != reflect.TypeOf(verb) || !reflect.DeepEqual(sel, verb) || !reflect.DeepEqual(want.Globals, cli.Globals) {
		t.Errorf("the-loop %s: parsePlain read\n%T %+v %+v\nkong read\n%T %+v %+v", strings.Join(args, " "),
			verb, verb, cli.Globals, sel, sel, want.Globals)
	}
	return true
}

// plainLines are command lines for every verb: each flag the verb and the
// global flags have, in each form, with each enum value and a wrong one,
// with and without positional arguments, alone, in pairs and repeated.
func plainLines(t *testing.T) [][]string {
	parser, err := kong.New(new(CLI), cliVars())
	if err != nil {
		t.Fatal(err)
	}
	globals := parser.Model.Node.Flags
	var lines [][]string
	var walk func(n *kong.Node, path []string)
	walk = func(n *kong.Node, path []string) {
		if len(n.Children) > 0 {
			for _, c := range n.Children {
				walk(c, append(append([]string(nil), path...), c.Name))
			}
			return
		}
		var forms [][]string
		for _, f := range append(append([]*kong.Flag(nil), globals...), n.Flags...) {
			name := "--" + f.Name
			if f.IsBool() {
				forms = append(forms, []string{name}, []string{name + "=true"})
				if f.Short != 0 {
					forms = append(forms, []string{"-" + string(f.Short)})
				}
				continue
			}
			values := append([]string{"x", "3", "010", "-1", ""}, f.EnumSlice()...)
			for _, v := range values {
				forms = append(forms, []string{name + "=" + v}, []string{name, v})
			}
			forms = append(forms, []string{name})
		}
		positionals := [][]string{nil, {"a"}, {"a", "b"}, {"a", "b", "c"}, {"bash"}, {"cli"}, {"-"}}
		for _, pos := range positionals {
			lines = append(lines, cat(path, pos))
			for i, f := range forms {
				lines = append(lines, cat(path, pos, f), cat(path, f, pos), cat(path, pos, f, f))
				if i+1 < len(forms) {
					lines = append(lines, cat(path, pos, f, forms[i+1]))
				}
			}
		}
	}
	walk(parser.Model.Node, nil)
	return lines
}

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestPlainLinesParseAsKongParsesThem: whatever parsePlain accepts, kong
// parses to the same values, on every verb's lines and on the command
// line surface; and it accepts the plain lines it is for.
func TestPlainLinesParseAsKongParsesThem(t *testing.T) {
	t.Parallel() // slow under -race, and shares nothing with the other slow ones
	accepted := 0
	for _, args := range append(plainLines(t), surfaceLines(t)...) {
		if samePlainAsKong(t, args) {
			accepted++
		}
	}
	if accepted < 1000 {
		t.Errorf("parsePlain accepted %d lines, want most plain ones", accepted)
	}
	for _, l := range []string{
		"graph show", "graph show --format json", "graph show --loop pdlc-pr-loop --format=mermaid",
		"check issue-1", "check --all --format json -v", "check --changed --base main --repo r",
		"graph status issue-1 --format mermaid", "new issue-2 --dry-run", "config schema cli", "config validate",
		"hooks run x-licence issue-1 --boundary exit",
		"reply --channel slack --thread C:1 --author U --text hi",
	} {
		if _, _, ok := parsePlain(strings.Fields(l)); !ok {
			t.Errorf("parsePlain declined the-loop %s, a plain line", l)
		}
	}
	for _, l := range []string{
		"", "--version", "-v graph show", "graph", "graph show --help", "graph show -h", "graph show --format nope",
		"graph show --format", "graph show --format=", "graph show --loop -x", "graph show -- x", "graph show x",
		"check a --all --all", "check -vv", "graph force issue-1 --reason r", "completion bash", "config schema nope",
		"serve --port 1", "graph skip issue-1 a", "graph run issue-1 --max-nodes 3",
	} {
		if _, _, ok := parsePlain(strings.Fields(l)); ok {
			t.Errorf("parsePlain accepted the-loop %s, which is kong's to parse", l)
		}
	}
}

func FuzzPlainParse(f *testing.F) {
	for _, l := range []string{"graph show --format json", "check issue-1 --all -v", "hooks run h i --with {}", "config schema cli"} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		samePlainAsKong(t, strings.Fields(line))
	})
}

// hookedByMethod is hooked as it was, asking reflect for each method.
func hookedByMethod(t reflect.Type, run bool) bool {
	pt := reflect.PointerTo(t)
	for _, name := range kongHooks {
		if _, ok := pt.MethodByName(name); ok && !(run && name == "Run") {
			return true
		}
	}
	for i := range pt.NumMethod() {
		if strings.HasPrefix(pt.Method(i).Name, "Provide") {
			return true
		}
	}
	return false
}

// treeTypes are t and every type its fields have, depth first.
func treeTypes(t reflect.Type, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			treeTypes(t.Field(i).Type, seen)
		}
	}
}

type (
	plainRunHelp struct{}
	plainOddRun  struct{}
	plainHook    struct{}
	plainProvide struct{}
	plainOther   struct{}
)

func (*plainRunHelp) Run(*Globals, *Output) error { return nil }
func (*plainRunHelp) Help() string                { return "" }
func (*plainOddRun) Run(*Output) error            { return nil }
func (*plainHook) Run(*Globals, *Output) error    { return nil }
func (*plainHook) Validate() error                { return nil }
func (*plainProvide) ProvideEngine() (int, error) { return 0, nil }
func (plainOther) Other()                         {}
func (plainOther) BeforeReset(*kong.Kong) error   { return nil }

func TestHookedIsWhatReflectsMethodsSay(t *testing.T) {
	types := map[reflect.Type]bool{}
	treeTypes(reflect.TypeFor[CLI](), types)
	for _, typ := range []reflect.Type{
		reflect.TypeFor[plainRunHelp](), reflect.TypeFor[plainOddRun](), reflect.TypeFor[plainHook](),
		reflect.TypeFor[plainProvide](), reflect.TypeFor[plainOther](), reflect.TypeFor[kong.VersionFlag](),
	} {
		types[typ] = true
	}
	for typ := range types {
		for _, run := range []bool{false, true} {
			if got, want := hooked(typ, run), hookedByMethod(typ, run); got != want {
				t.Errorf("hooked(%v, %v) = %v, want %v", typ, run, got, want)
			}
		}
		pt := reflect.PointerTo(typ)
		if names, ok := knownMethodNames(pt); ok {
			var want []string
			for i := range pt.NumMethod() {
				want = append(want, pt.Method(i).Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, want) {
				t.Errorf("knownMethodNames(%v) = %q, want %q", pt, names, want)
			}
		}
	}
	for typ, want := range map[reflect.Type]bool{
		reflect.TypeFor[GraphShowCmd](): true, reflect.TypeFor[CheckCmd](): true, reflect.TypeFor[plainRunHelp](): true,
		reflect.TypeFor[kong.VersionFlag](): true, reflect.TypeFor[plainOddRun](): false, reflect.TypeFor[plainOther](): false,
	} {
		if _, ok := knownMethodNames(reflect.PointerTo(typ)); ok != want {
			t.Errorf("knownMethodNames(*%v) knows them all: %v, want %v", typ, ok, want)
		}
	}
}
