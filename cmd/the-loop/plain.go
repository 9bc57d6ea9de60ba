package main

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/kong"
)

// Most command lines are plain: a verb's words, then its flags and
// arguments in their simplest forms. Kong parses them as well as anything
// else, but first builds its model of the verb from the struct tags,
// which is most of what a short verb costs (about 0.7 ms of a graph show
// that otherwise takes about three, almost all of it code and data a
// process touches once). parsePlain reads a plain line straight into the
// CLI struct, by the same tags, and declines anything else, which kong
// then parses as before: help, --version, completion, an error of any
// kind (kong words it), a flag before the verb, a repeated flag, "--",
// short flags but a lone bool, a value that starts with "-", text that is
// not UTF-8, and any tag,
// type or hook it does not know. TestPlainLinesParseAsKongParsesThem and
// FuzzPlainParse hold what it accepts to kong's result, field for field.

// plainValue is a flag or positional argument parsePlain can fill: a
// bool, string or int with at most an enum, a default and required.
type plainValue struct {
	to       reflect.Value
	enum     []string // nil: any value
	def      string
	hasDef   bool
	required bool
	set      bool
}

// plainTags are the struct tags parsePlain knows. help, placeholder and
// predictor only describe; type may only say string.
var plainTags = []string{"arg", "cmd", "default", "enum", "help", "hidden", "name", "optional", "placeholder", "predictor", "required", "short", "type"}

// kongHooks are the methods kong calls on a node or a value while it
// parses, binds or runs; parsePlain would not.
var kongHooks = []string{"BeforeReset", "BeforeResolve", "BeforeApply", "AfterApply", "AfterRun", "Validate", "Decode", "Run"}

type plainParser struct {
	long  map[string]*plainValue
	short map[byte]*plainValue
	args  []*plainValue // the verb's positional arguments, in order
	// argsEnd is set at an argument parsePlain does not fill: any after
	// it would be in the wrong place.
	argsEnd bool
}

// parsePlain parses args as kong would when they are a plain command line
// (see above), returning the CLI and the verb selected; ok is false when
// kong must parse them.
func parsePlain(args []string) (cli *CLI, verb runner, ok bool) {
	cli = new(CLI)
	p := plainParser{long: map[string]*plainValue{}, short: map[byte]*plainValue{}}
	v := reflect.ValueOf(cli).Elem()
	if !p.add(v, false) {
		return nil, nil, false
	}
	i := 0
	cmds := commandsOf(v.Type()) // the subcommands of v
	for ; i < len(args); i++ {
		c, found := commandNamed(cmds, args[i])
		if !found {
			break
		}
		if hooked(v.Type(), false) { // a Run on a parent node runs too
			return nil, nil, false
		}
		v = v.FieldByName(c.field)
		cmds = commandsOf(v.Type())
		if !p.add(v, len(cmds) == 0) {
			return nil, nil, false
		}
	}
	if i == 0 || len(cmds) > 0 || hooked(v.Type(), true) {
		return nil, nil, false
	}
	verb, ok = v.Addr().Interface().(runner)
	if !ok || !p.parse(args[i:]) {
		return nil, nil, false
	}
	return cli, verb, true
}

// runner is a verb as parsePlain runs it: what kong would call with the
// same two bindings.
type runner interface {
	Run(*Globals, *Output) error
}

func commandNamed(cmds []command, name string) (command, bool) {
	for _, c := range cmds {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// hooked reports whether kong would call a method of t's, or its
// pointer's: a hook while it parses, a provider, or (unless run is
// allowed, as it is of the verb) a Run.
func hooked(t reflect.Type, run bool) bool {
	pt := reflect.PointerTo(t)
	names, ok := knownMethodNames(pt)
	if !ok {
		names = make([]string, pt.NumMethod())
		for i := range names {
			names[i] = pt.Method(i).Name
		}
	}
	for _, name := range names {
		if (slices.Contains(kongHooks, name) && !(run && name == "Run")) || strings.HasPrefix(name, "Provide") {
			return true
		}
	}
	return false
}

// knownMethods are methods a type of the command tree has, each with
// the interface that has just that method. reflect's Method builds the
// method's func type (reflect.FuncOf, which searches the program's
// types), and that was most of what parsePlain cost; Implements does
// not.
var knownMethods = []struct {
	name string
	in   reflect.Type
}{
	{"Run", reflect.TypeFor[runner]()},
	{"Help", reflect.TypeFor[kong.HelpProvider]()},
	{"BeforeReset", reflect.TypeFor[interface {
		BeforeReset(*kong.Kong, kong.Vars) error
	}]()},
}

// knownMethodNames are the names of pt's exported methods when each is
// one of knownMethods, found without reflect's Method; ok is false when
// pt has another.
func knownMethodNames(pt reflect.Type) (names []string, ok bool) {
	n := pt.NumMethod()
	for _, m := range knownMethods {
		if len(names) == n {
			break
		}
		if pt.Implements(m.in) {
			names = append(names, m.name)
		}
	}
	return names, len(names) == n
}

// add declares the flags of struct v (a node of the command tree) and,
// when it is the verb, its positional arguments; false when v has what
// parsePlain does not know. A flag of a type it does not fill is left
// undeclared, and so zero as kong leaves it, unless it has a default or
// is required; naming it declines the line.
func (p *plainParser) add(v reflect.Value, verb bool) bool {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if _, ok := f.Tag.Lookup("cmd"); ok {
			continue
		}
		if !knownTags(f.Tag) {
			return false
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag == "" {
			if hooked(f.Type, false) || !p.add(v.Field(i), verb) {
				return false
			}
			continue
		}
		arg := hasTag(f.Tag, "arg")
		if arg && !verb {
			return false
		}
		pv, ok := plainValueOf(v.Field(i), f.Tag)
		if !ok {
			if hasTag(f.Tag, "default") || hasTag(f.Tag, "required") || (arg && !hasTag(f.Tag, "optional")) {
				return false
			}
			if arg {
				p.argsEnd = true // no argument after this one is parsePlain's
			}
			continue
		}
		if arg {
			if pv.to.Kind() == reflect.Bool {
				return false
			}
			pv.required = pv.required || !hasTag(f.Tag, "optional")
			if !p.argsEnd {
				p.args = append(p.args, pv)
			} else if pv.required || pv.hasDef {
				return false
			}
			continue
		}
		name := f.Tag.Get("name")
		if name == "" {
			name = kongName(f.Name)
		}
		if p.long[name] != nil {
			return false
		}
		p.long[name] = pv
		if s := f.Tag.Get("short"); s != "" {
			if len(s) != 1 || pv.to.Kind() != reflect.Bool {
				return false
			}
			p.short[s[0]] = pv
		}
	}
	return true
}

// knownTags reports whether every key of tag is one of plainTags, and a
// type is "string".
func knownTags(tag reflect.StructTag) bool {
	s := string(tag)
	for s != "" {
		s = strings.TrimLeft(s, " ")
		key, rest, ok := strings.Cut(s, ":")
		if !ok || !strings.HasPrefix(rest, `"`) {
			return s == ""
		}
		value, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return false
		}
		if !slices.Contains(plainTags, key) || (key == "type" && value != `"string"`) {
			return false
		}
		s = rest[len(value):]
	}
	return true
}

// plainValueOf is the field v under tag, when it is a bool, string or int
// whose enum and default say only what plainTags can.
func plainValueOf(v reflect.Value, tag reflect.StructTag) (*plainValue, bool) {
	switch v.Kind() {
	case reflect.Bool, reflect.String, reflect.Int:
	default:
		return nil, false
	}
	if hooked(v.Type(), false) {
		return nil, false
	}
	pv := &plainValue{to: v, required: hasTag(tag, "required")}
	if enum, ok := tag.Lookup("enum"); ok {
		enum, ok := interpolate(enum)
		if !ok {
			return nil, false
		}
		pv.enum = strings.Split(enum, ",")
		for i := range pv.enum {
			pv.enum[i] = strings.TrimSpace(pv.enum[i])
		}
	}
	if def, ok := tag.Lookup("default"); ok {
		if pv.def, ok = interpolate(def); !ok {
			return nil, false
		}
		pv.hasDef = true
	}
	return pv, true
}

// interpolate replaces each ${name} in s with the command tree's variable
// (cliVar); false for a name there is none of, or kong's other forms.
func interpolate(s string) (string, bool) {
	var b strings.Builder
	for {
		before, after, found := strings.Cut(s, "${")
		b.WriteString(before)
		if !found {
			return b.String(), true
		}
		name, rest, ok := strings.Cut(after, "}")
		value, known := cliVar(name)
		if !ok || !known {
			return "", false
		}
		b.WriteString(value)
		s = rest
	}
}

// parse reads the words after the verb's, then applies the defaults;
// false when kong must.
func (p *plainParser) parse(args []string) bool {
	for _, a := range args {
		if !utf8.ValidString(a) {
			return false // kong reads it as runes, so would change it
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			pv := p.long[name]
			switch {
			case pv == nil:
				return false
			case pv.to.Kind() == reflect.Bool:
				if hasValue {
					return false
				}
				value = "true"
			case !hasValue:
				if i+1 == len(args) {
					return false
				}
				i++
				value = args[i]
			}
			if !pv.assign(value) {
				return false
			}
		case strings.HasPrefix(a, "-"):
			if len(a) != 2 || p.short[a[1]] == nil || !p.short[a[1]].assign("true") {
				return false
			}
		default:
			if len(p.args) == 0 || !p.args[0].assign(a) {
				return false
			}
			p.args = p.args[1:]
		}
	}
	for _, pv := range p.long {
		if !pv.finish() {
			return false
		}
	}
	for _, pv := range p.args {
		if !pv.finish() {
			return false
		}
	}
	return true
}

// assign sets the value from the command line: once, not empty, not
// starting with "-", one of the enum's, and a decimal int for an int.
func (pv *plainValue) assign(s string) bool {
	if pv.set || s == "" || strings.HasPrefix(s, "-") {
		return false
	}
	pv.set = true
	return pv.store(s)
}

// finish applies the default of a value the command line did not set;
// false when it was required.
func (pv *plainValue) finish() bool {
	switch {
	case pv.set:
		return true
	case pv.required:
		return false
	case pv.hasDef:
		return pv.store(pv.def)
	}
	return pv.enum == nil || pv.inEnum("")
}

func (pv *plainValue) store(s string) bool {
	if pv.enum != nil && !pv.inEnum(s) {
		return false
	}
	switch pv.to.Kind() {
	case reflect.Bool:
		if s != "true" {
			return false
		}
		pv.to.SetBool(true)
	case reflect.String:
		pv.to.SetString(s)
	case reflect.Int:
		if s != "0" && (s[0] < '1' || s[0] > '9') {
			return false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || pv.to.OverflowInt(n) {
			return false
		}
		pv.to.SetInt(n)
	}
	return true
}

func (pv *plainValue) inEnum(s string) bool { return slices.Contains(pv.enum, s) }
