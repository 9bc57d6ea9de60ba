package main

import (
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/alecthomas/kong"
)

// Building kong's model of the command tree is most of what a short verb
// costs: every flag's tag parsed, its help and the variables interpolated
// with a regular expression, hooks looked up; about 11,000 allocations for
// the whole tree, on every invocation. A command line that names its verb
// needs only that verb's subtree, and --version no verb at all, so
// parseArgs builds just that much (kong.IgnoreFields leaves the other
// verbs of CLI out) and the whole tree only when it has to: for help,
// which lists the tree, for shell completion, and to word any error, so
// that every message reads exactly as it does with the whole tree
// (TestTheCommandLineSurface pins them all).

// A scope is how much of the command tree a parser is built with.
type scope struct {
	// path is the command whose subtree is built, as the words that
	// select it ("graph show"), with the global flags and, on the way
	// down, each command's own flags; "" for every command, "-" for none.
	path  string
	plain bool // every command, without its flags and arguments
}

// whole is the whole command tree.
var whole = scope{}

// newParser is the parser of the command tree, or of the part of it in
// scope. Kong's exits (help, version) set *exit.
func newParser(cli *CLI, exit *int, stdout, stderr io.Writer, in scope) (*kong.Kong, error) {
	opts := []kong.Option{
		kong.Name("the-loop"),
		kong.Description("A policy engine for spec-driven development: which gates a work item has met, and which it has not."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { *exit = code }),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		cliVars(),
	}
	if in.plain {
		// Kong reads every field's tag even of a field it is told to
		// ignore, so the commands without their flags are a tree of
		// their own: the same commands, tags and order, with nothing in
		// them but their subcommands.
		return kong.New(reflect.New(commandTree(reflect.TypeFor[CLI]())).Interface(), opts...)
	}
	// IgnoreFields matches "Type.Field", Field being a field of the
	// node's struct after embedded structs are flattened into it.
	var ignore []string
	if in.path != "" {
		t := reflect.TypeFor[CLI]()
		for _, word := range strings.Fields(in.path) {
			var next reflect.Type
			for _, c := range commandsOf(t) {
				if c.name == word {
					next = c.typ
				} else {
					ignore = append(ignore, t.Name()+"."+c.field)
				}
			}
			if next == nil { // "-": no command at all
				break
			}
			t = next
		}
	}
	if len(ignore) > 0 {
		for i, f := range ignore {
			ignore[i] = regexp.QuoteMeta(f)
		}
		opts = append(opts, kong.IgnoreFields(`^(?:`+strings.Join(ignore, "|")+`)$`))
	}
	return kong.New(cli, opts...)
}

// cliVarNames are the variables the command tree's tags may name, as
// ${name}.
var cliVarNames = []string{"reportFormats", "textFormats", "graphFormats", "statusFormats", "version"}

// cliVar is the value of the variable name in the command tree's tags.
func cliVar(name string) (string, bool) {
	switch name {
	case "reportFormats":
		return strings.Join(reportFormatNames(), ","), true
	case "textFormats":
		return "text,json", true
	case "graphFormats":
		return "text,json," + mermaidFormat, true
	case "statusFormats":
		return strings.Join(statusFormatNames(), ","), true
	case "version":
		return version(), true
	}
	return "", false
}

func cliVars() kong.Vars {
	vars := kong.Vars{}
	for _, name := range cliVarNames {
		vars[name], _ = cliVar(name)
	}
	return vars
}

// commandTree is struct t with only its commands, each a commandTree
// itself, and, at the root, the global flags.
func commandTree(t reflect.Type) reflect.Type {
	var fs []reflect.StructField
	for _, f := range exportedFields(t) {
		switch {
		case f.Anonymous && f.Type == reflect.TypeFor[Globals]():
			fs = append(fs, f)
		case hasTag(f.Tag, "cmd"):
			f.Type = commandTree(f.Type)
			fs = append(fs, f)
		}
	}
	for i := range fs {
		fs[i].Index, fs[i].Offset = nil, 0
	}
	return reflect.StructOf(fs)
}

func hasTag(tag reflect.StructTag, key string) bool {
	_, ok := tag.Lookup(key)
	return ok
}

func exportedFields(t reflect.Type) []reflect.StructField {
	var fs []reflect.StructField
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() {
			fs = append(fs, f)
		}
	}
	return fs
}

// parseArgs parses args into a CLI, with as little of the command tree as
// they need. exit is kong's exit code when kong answered the command line
// itself (help, version), else -1. A nil cli is a command tree kong
// refuses, err saying why.
func parseArgs(args []string, stdout, stderr io.Writer) (cli *CLI, ctx *kong.Context, exit int, err error) {
	if in, ok := scopeOf(args); ok {
		cli, exit = new(CLI), -1
		parser, err := newParser(cli, &exit, stdout, stderr, in)
		if err == nil {
			ctx, err = parser.Parse(args)
			if exit >= 0 || (err == nil && ctx.Selected() != nil) {
				return cli, ctx, exit, nil
			}
		}
		// An error, or no verb selected, is said by the whole tree,
		// from a fresh start: parsing has no effect but on cli.
	}
	cli, exit = new(CLI), -1
	parser, err := newParser(cli, &exit, stdout, stderr, whole)
	if err != nil {
		return nil, nil, -1, err
	}
	ctx, err = parser.Parse(args)
	return cli, ctx, exit, err
}

// command is a command field of a struct: its name, the word that selects
// it and its type.
type command struct {
	field, name string
	typ         reflect.Type
}

// commandsOf are the commands declared in struct t, in order. It reads
// the fields one at a time, without exportedFields' slice of them: it is
// on the way of every plain command line (see plain.go).
func commandsOf(t reflect.Type) []command {
	var cs []command
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if _, ok := f.Tag.Lookup("cmd"); ok {
			name := f.Tag.Get("name")
			if name == "" {
				name = kongName(f.Name)
			}
			cs = append(cs, command{f.Name, name, f.Type})
		}
	}
	return cs
}

// kongName is the name kong gives a field without a name tag: its words
// in lower case, joined by dashes (GraphShow is graph-show).
func kongName(field string) string {
	var b strings.Builder
	for i, r := range field {
		if unicode.IsUpper(r) {
			if i > 0 && unicode.IsLower(rune(field[i-1])) {
				b.WriteByte('-')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// globalsWithValues are the global flags that take a value as the next
// argument, which is therefore not the verb.
var globalsWithValues = []string{"--repo", "--config"}

// scopeOf is how much of the tree args need: the subtree of the command
// they name, whatever else they say (a subcommand counts when it follows
// its command directly: "graph show", not "graph --x show"); with no
// command, the global flags (as for --version), or every command without
// its flags when help is asked for (the help lists them, and no more). ok
// is false when args need the whole tree: their first word is not a
// command.
func scopeOf(args []string) (in scope, ok bool) {
	help := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return scope{}, false
		case a == "--help" || strings.HasPrefix(a, "--help=") ||
			(strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "h")):
			help = true
		case strings.HasPrefix(a, "-"):
			if slices.Contains(globalsWithValues, a) {
				i++
			}
		default:
			path, t := []string(nil), reflect.TypeFor[CLI]()
			for ; i < len(args); i++ {
				c, ok := commandNamed(commandsOf(t), args[i])
				if !ok {
					break
				}
				path, t = append(path, args[i]), c.typ
			}
			if path == nil {
				return scope{}, false
			}
			return scope{path: strings.Join(path, " ")}, true
		}
	}
	if help {
		return scope{plain: true}, true
	}
	return scope{path: "-"}, true
}
