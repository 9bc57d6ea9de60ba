package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is the JSON Schema validator for the two embedded schemas, and
// nothing more. A general library (santhosh-tekuri/jsonschema) did the job
// before; its package initialisation alone (the draft metaschemas, the
// format and vocabulary tables: 21,000 allocations, 5 ms) ran in every
// process that linked it, --version and --help included, and compiling a
// schema with it took milliseconds more. The schemas use a small, fixed
// part of draft 2020-12, so this validator implements exactly that part,
// compiles a schema only when a config is validated, and refuses to
// compile one that uses anything else (see knownKeyword): a schema can
// never silently outgrow it. The library is kept in the tests as the
// oracle: every fixture config and fuzzed document must get the same
// verdict and the same message from both.
//
// The failures it reports have the library's shape (a tree of failures
// whose leaves say what is wrong where), because schemaError words them
// from that shape, and the leaves this file words itself use the library's
// exact wording, numbers included.

// knownKeyword reports whether compileDecoded accepts the keyword kw; the
// comment on each says why it needs no more than it gets here. A schema
// using anything else is refused.
func knownKeyword(kw string) bool {
	switch kw {
	case "$schema", // root only; must be draft 2020-12
		"$id",   // root only; names the schema
		"$defs": // root only; the targets of $ref
		return true
	case "title", "description", "default", "deprecated", // annotations: 2020-12 asserts nothing for them
		"format": // annotation too: 2020-12's format-annotation vocabulary asserts nothing
		return true
	case "type", "enum", "required", "minProperties", "minItems", "uniqueItems",
		"minLength", "pattern", "minimum", "maximum", "exclusiveMinimum": // assertions
		return true
	case "$ref", "properties", "additionalProperties", "items", "oneOf": // applicators
		return true
	}
	return false
}

const draft202012 = "https://json-schema.org/draft/2020-12/schema"

// jsonType is a set of JSON types, as the "type" keyword names them.
type jsonType uint8

const (
	typeNull jsonType = 1 << iota
	typeBoolean
	typeNumber
	typeInteger
	typeString
	typeArray
	typeObject
)

// typeNames is in the order the library lists wanted types, which is the
// order a message names them in ("got number, want boolean or string").
var typeNames = []struct {
	t    jsonType
	name string
}{
	{typeNull, "null"}, {typeBoolean, "boolean"}, {typeNumber, "number"}, {typeInteger, "integer"},
	{typeString, "string"}, {typeArray, "array"}, {typeObject, "object"},
}

func (t jsonType) names() []string {
	var out []string
	for _, n := range typeNames {
		if t&n.t != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// typeOf is the JSON type of a decoded value, 0 for a value JSON has no
// type for. Integers are numbers: "integer" is a property a number may
// have (see isInteger).
func typeOf(v any) jsonType {
	switch v := v.(type) {
	case nil:
		return typeNull
	case bool:
		return typeBoolean
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return typeNumber
	case float32:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0
		}
		return typeNumber
	case json.Number, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return typeNumber
	case string:
		return typeString
	case []any:
		return typeArray
	case map[string]any:
		return typeObject
	}
	return 0
}

// ratOf is a number's exact value. It goes through the number's decimal
// text, as the library does, so both compare and print alike.
func ratOf(v any) *big.Rat {
	r, ok := new(big.Rat).SetString(fmt.Sprint(v))
	if !ok {
		return nil
	}
	return r
}

func isInteger(v any) bool {
	r := ratOf(v)
	return r != nil && r.IsInt()
}

// compiledSchema is one schema or subschema. A zero field is an absent
// keyword; counts are -1 when absent.
type compiledSchema struct {
	types         jsonType
	enum          []any // nil: no enum
	enumTypes     jsonType
	ref           *compiledSchema
	properties    map[string]*compiledSchema
	closed        bool            // additionalProperties: false
	additional    *compiledSchema // additionalProperties as a schema
	required      []string
	minProperties int
	items         *compiledSchema
	minItems      int
	uniqueItems   bool
	minLength     int
	pattern       *regexp.Regexp
	minimum       *big.Rat
	maximum       *big.Rat
	exclMinimum   *big.Rat
	oneOf         []*compiledSchema
}

// schemaCompiler compiles one schema document.
type schemaCompiler struct {
	defs map[string]any
	done map[string]*compiledSchema // compiled $defs, by name
	// at is where in the document the compiler is, as JSON pointer tokens:
	// kept as a stack and joined only for an error, since compiling runs
	// in the processes that validate a config and paths cost allocations.
	at []string
}

// compileDecoded compiles a decoded schema document (schemas_decoded.go). An
// error means the document uses JSON Schema this validator does not
// implement: a build defect, which the tests catch.
func compileDecoded(url string, doc any) (*compiledSchema, error) {
	s, err := compileDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("embedded schema %s: %w", url, err)
	}
	return s, nil
}

func compileDocument(doc any) (*compiledSchema, error) {
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("not an object")
	}
	if root["$schema"] != draft202012 {
		return nil, fmt.Errorf("$schema is %v, want %s", root["$schema"], draft202012)
	}
	c := &schemaCompiler{done: map[string]*compiledSchema{}, at: make([]string, 0, 16)}
	if d, ok := root["$defs"]; ok {
		if c.defs, ok = d.(map[string]any); !ok {
			return nil, errors.New("$defs is not an object")
		}
	}
	s := &compiledSchema{}
	if err := c.fill(s, root, true); err != nil {
		return nil, err
	}
	// Every definition compiles, used or not, so that none hides a keyword
	// this validator would refuse.
	for name := range c.defs {
		if _, err := c.def(name); err != nil {
			return nil, err
		}
	}
	if err := checkRefCycles(s); err != nil {
		return nil, err
	}
	return s, nil
}

// errorf is an error at the compiler's place in the document.
func (c *schemaCompiler) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", jsonPointer(c.at), fmt.Sprintf(format, args...))
}

// def compiles the definition name once; a reference to one being compiled
// gets the same (still filling) schema.
func (c *schemaCompiler) def(name string) (*compiledSchema, error) {
	if s, ok := c.done[name]; ok {
		return s, nil
	}
	raw, ok := c.defs[name]
	if !ok {
		return nil, c.errorf("$ref to #/$defs/%s, which is not defined", name)
	}
	s := &compiledSchema{}
	c.done[name] = s
	// A definition is compiled where it is, not where it is used from.
	at := c.at
	c.at = append(make([]string, 0, 16), "$defs", name)
	defer func() { c.at = at }()
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, c.errorf("got %T, want a schema object", raw)
	}
	return s, c.fill(s, obj, false)
}

// compile compiles the subschema raw found at the tokens at.
func (c *schemaCompiler) compile(raw any, at ...string) (*compiledSchema, error) {
	c.at = append(c.at, at...)
	defer func() { c.at = c.at[:len(c.at)-len(at)] }()
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, c.errorf("got %T, want a schema object", raw)
	}
	s := &compiledSchema{}
	return s, c.fill(s, obj, false)
}

func (c *schemaCompiler) fill(s *compiledSchema, obj map[string]any, root bool) error {
	s.minProperties, s.minItems, s.minLength = -1, -1, -1
	for kw, v := range obj {
		if !knownKeyword(kw) {
			return c.errorf("keyword %q is not implemented by this validator (policy/jsonschema.go)", kw)
		}
		if (kw == "$schema" || kw == "$id" || kw == "$defs") && !root {
			return c.errorf("%s is only understood at the root", kw)
		}
		c.at = append(c.at, kw)
		err := c.keyword(s, kw, v)
		c.at = c.at[:len(c.at)-1]
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *schemaCompiler) keyword(s *compiledSchema, kw string, v any) error {
	var err error
	switch kw {
	case "type":
		switch t := v.(type) {
		case string:
			err = s.addType(t)
		case []any:
			for _, e := range t {
				name, _ := e.(string)
				if err = s.addType(name); err != nil {
					break
				}
			}
		default:
			err = fmt.Errorf("got %T, want a type name or a list of them", v)
		}
	case "enum":
		list, ok := v.([]any)
		if !ok {
			return c.errorf("got %T, want a list", v)
		}
		for _, e := range list {
			t := typeOf(e)
			if t == 0 || t == typeArray || t == typeObject {
				return c.errorf("member %v is not a string, number, boolean or null", e)
			}
			s.enumTypes |= t
		}
		s.enum = list
	case "$ref":
		ref, _ := v.(string)
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		if !ok || strings.ContainsAny(name, "/~%") {
			return c.errorf("%q is not a reference of the form #/$defs/<name>", ref)
		}
		s.ref, err = c.def(name)
		return err
	case "properties":
		props, ok := v.(map[string]any)
		if !ok {
			return c.errorf("got %T, want an object", v)
		}
		s.properties = make(map[string]*compiledSchema, len(props))
		for name, raw := range props {
			if s.properties[name], err = c.compile(raw, name); err != nil {
				return err
			}
		}
	case "additionalProperties":
		if b, ok := v.(bool); ok {
			s.closed = !b
			break
		}
		s.additional, err = c.compile(v)
		return err
	case "required":
		list, ok := v.([]any)
		if !ok {
			return c.errorf("got %T, want a list of names", v)
		}
		for _, e := range list {
			name, ok := e.(string)
			if !ok {
				return c.errorf("got %T, want a name", e)
			}
			s.required = append(s.required, name)
		}
	case "minProperties":
		s.minProperties, err = count(v)
	case "items":
		s.items, err = c.compile(v)
		return err
	case "minItems":
		s.minItems, err = count(v)
	case "uniqueItems":
		b, ok := v.(bool)
		if !ok {
			err = fmt.Errorf("got %T, want a boolean", v)
		}
		s.uniqueItems = b
	case "minLength":
		s.minLength, err = count(v)
	case "pattern":
		p, _ := v.(string)
		s.pattern, err = regexp.Compile(p)
	case "minimum":
		s.minimum, err = bound(v)
	case "maximum":
		s.maximum, err = bound(v)
	case "exclusiveMinimum":
		s.exclMinimum, err = bound(v)
	case "oneOf":
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return c.errorf("want a non-empty list of schemas")
		}
		for i, e := range list {
			alt, err := c.compile(e, strconv.Itoa(i))
			if err != nil {
				return err
			}
			s.oneOf = append(s.oneOf, alt)
		}
	case "format":
		if _, ok := v.(string); !ok {
			err = fmt.Errorf("got %T, want a string", v)
		}
	case "deprecated":
		if _, ok := v.(bool); !ok {
			err = fmt.Errorf("got %T, want a boolean", v)
		}
	case "$defs":
		// Compiled through $ref, and all of them by compileDocument.
	}
	if err != nil {
		return c.errorf("%v", err)
	}
	return nil
}

func (s *compiledSchema) addType(name string) error {
	for _, n := range typeNames {
		if n.name == name {
			s.types |= n.t
			return nil
		}
	}
	return fmt.Errorf("unknown type %q", name)
}

// count is a keyword's non-negative integer.
func count(v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("got %T, want a non-negative integer", v)
	}
	i, err := strconv.Atoi(n.String())
	if err != nil || i < 0 {
		return 0, fmt.Errorf("got %s, want a non-negative integer", n)
	}
	return i, nil
}

func bound(v any) (*big.Rat, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("got %T, want a number", v)
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok {
		return nil, fmt.Errorf("got %s, want a number", n)
	}
	return r, nil
}

// checkRefCycles refuses a schema that can reach itself without moving to
// a part of the document ($ref or oneOf all the way round): validating
// with it would never end.
func checkRefCycles(root *compiledSchema) error {
	seen := map[*compiledSchema]bool{}
	var visit func(s *compiledSchema, inPlace []*compiledSchema) error
	visit = func(s *compiledSchema, inPlace []*compiledSchema) error {
		if slices.Contains(inPlace, s) {
			return fmt.Errorf("a $ref or oneOf cycle that consumes nothing")
		}
		inPlace = append(inPlace, s)
		for _, t := range s.oneOf {
			if err := visit(t, inPlace); err != nil {
				return err
			}
		}
		if s.ref != nil {
			if err := visit(s.ref, inPlace); err != nil {
				return err
			}
		}
		if seen[s] {
			return nil
		}
		seen[s] = true
		for _, t := range s.properties {
			if err := visit(t, nil); err != nil {
				return err
			}
		}
		for _, t := range []*compiledSchema{s.additional, s.items} {
			if t != nil {
				if err := visit(t, nil); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return visit(root, nil)
}

// failureKind says what a failure is.
type failureKind int

const (
	failGroup      failureKind = iota // several failures of one value: the causes
	failRef                           // the $ref's target failed: the causes
	failNoneOf                        // no oneOf alternative fits: the causes are each one's failure
	failType                          // got a type the schema does not allow
	failEnum                          // got a value not in the enum
	failRequired                      // required keys are missing
	failAdditional                    // keys the schema does not declare
	failPattern                       // a string that does not match
	failOther                         // worded in msg
)

// failure is one node of a validation failure tree: the library's
// ValidationError, reduced to what schemaError reads. A leaf has no causes.
type failure struct {
	loc    []string // where in the document, as JSON pointer tokens
	kind   failureKind
	got    any      // failType: the type's name; failEnum: the value; failPattern: the string
	want   []string // failType: type names; failRequired, failAdditional: keys; failPattern: the pattern
	enum   []any    // failEnum: the allowed values
	msg    string   // failOther
	causes []*failure
}

func newFailure(loc []string, kind failureKind) *failure {
	return &failure{loc: slices.Clone(loc), kind: kind}
}

func otherFailure(loc []string, format string, args ...any) *failure {
	f := newFailure(loc, failOther)
	f.msg = fmt.Sprintf(format, args...)
	return f
}

// validate checks v against s. loc is where v is; it is copied, never
// kept. The checks and the order in which they are made are the library's,
// so that the same failures come out in the same order.
func (s *compiledSchema) validate(v any, loc []string) *failure {
	t := typeOf(v)
	if t == 0 {
		return otherFailure(loc, "invalid jsonType %T", v)
	}
	if s.types != 0 && s.types&t == 0 && (s.types&typeInteger == 0 || t != typeNumber || !isInteger(v)) {
		f := newFailure(loc, failType)
		f.got, f.want = t.names()[0], s.types.names()
		return f
	}
	if s.enum != nil && !s.inEnum(v, t) {
		f := newFailure(loc, failEnum)
		f.got, f.enum = v, s.enum
		return f
	}
	var fails []*failure
	if s.ref != nil {
		if f := s.ref.validate(v, loc); f != nil {
			ref := newFailure(loc, failRef)
			if f.kind == failGroup {
				ref.causes = f.causes
			} else {
				ref.causes = []*failure{f}
			}
			fails = append(fails, ref)
		}
	}
	switch v := v.(type) {
	case map[string]any:
		fails = s.validateObject(v, loc, fails)
	case []any:
		fails = s.validateArray(v, loc, fails)
	case string:
		fails = s.validateString(v, loc, fails)
	default:
		if t == typeNumber {
			fails = s.validateNumber(v, loc, fails)
		}
	}
	if s.oneOf != nil {
		fails = s.validateOneOf(v, loc, fails)
	}
	switch len(fails) {
	case 0:
		return nil
	case 1:
		return fails[0]
	}
	g := newFailure(loc, failGroup)
	g.causes = fails
	return g
}

func (s *compiledSchema) inEnum(v any, t jsonType) bool {
	if s.enumTypes&t == 0 {
		return false
	}
	for _, e := range s.enum {
		if primitiveEqual(v, e) {
			return true
		}
	}
	return false
}

// primitiveEqual is JSON equality of v and a primitive enum member.
func primitiveEqual(v, member any) bool {
	switch m := member.(type) {
	case nil:
		return v == nil
	case bool:
		b, ok := v.(bool)
		return ok && b == m
	case string:
		s, ok := v.(string)
		return ok && s == m
	}
	if typeOf(v) != typeNumber {
		return false
	}
	a, b := ratOf(v), ratOf(member)
	return a != nil && b != nil && a.Cmp(b) == 0
}

func (s *compiledSchema) validateObject(obj map[string]any, loc []string, fails []*failure) []*failure {
	if s.minProperties >= 0 && len(obj) < s.minProperties {
		fails = append(fails, otherFailure(loc, "minProperties: got %s, want %s", englishInt(len(obj)), englishInt(s.minProperties)))
	}
	var missing []string
	for _, name := range s.required {
		if _, ok := obj[name]; !ok {
			missing = append(missing, name)
		}
	}
	if missing != nil {
		f := newFailure(loc, failRequired)
		f.want = missing
		fails = append(fails, f)
	}
	var unknown []string
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		sub, ok := s.properties[name]
		switch {
		case ok:
		case s.closed:
			unknown = append(unknown, name)
			continue
		case s.additional != nil:
			sub = s.additional
		default:
			continue
		}
		if f := sub.validate(obj[name], append(loc, name)); f != nil {
			fails = append(fails, f)
		}
	}
	if unknown != nil {
		f := newFailure(loc, failAdditional)
		f.want = unknown
		fails = append(fails, f)
	}
	return fails
}

func (s *compiledSchema) validateArray(arr []any, loc []string, fails []*failure) []*failure {
	if s.minItems >= 0 && len(arr) < s.minItems {
		fails = append(fails, otherFailure(loc, "minItems: got %s, want %s", englishInt(len(arr)), englishInt(s.minItems)))
	}
	if s.uniqueItems {
		if i, j, ok := firstDuplicate(arr); ok {
			fails = append(fails, otherFailure(loc, "items at %s and %s are equal", englishInt(i), englishInt(j)))
		}
	}
	if s.items != nil {
		for i, item := range arr {
			if f := s.items.validate(item, append(loc, strconv.Itoa(i))); f != nil {
				fails = append(fails, f)
			}
		}
	}
	return fails
}

// firstDuplicate finds the first item equal to an earlier one, j, and the
// first item it equals, i: the pair the library reports. It keys items by
// their canonical text, so a long list costs one pass, not one per pair.
func firstDuplicate(arr []any) (i, j int, ok bool) {
	if len(arr) < 2 {
		return 0, 0, false
	}
	seen := make(map[string]int, len(arr))
	var b strings.Builder
	for j, item := range arr {
		b.Reset()
		canonical(&b, item)
		k := b.String()
		if i, ok := seen[k]; ok {
			return i, j, true
		}
		seen[k] = j
	}
	return 0, 0, false
}

// canonical writes a text of v that two values share exactly when they
// are equal as JSON: numbers by exact value, objects with sorted keys.
func canonical(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("n")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		b.WriteString(strconv.Quote(v))
	case []any:
		b.WriteByte('[')
		for _, e := range v {
			canonical(b, e)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for _, k := range slices.Sorted(maps.Keys(v)) {
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			canonical(b, v[k])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	default:
		if r := ratOf(v); r != nil {
			b.WriteString("#" + r.RatString())
		} else {
			fmt.Fprintf(b, "?%T:%v", v, v)
		}
	}
}

func (s *compiledSchema) validateString(str string, loc []string, fails []*failure) []*failure {
	if s.minLength >= 0 {
		if n := utf8.RuneCountInString(str); n < s.minLength {
			fails = append(fails, otherFailure(loc, "minLength: got %s, want %s", englishInt(n), englishInt(s.minLength)))
		}
	}
	if s.pattern != nil && !s.pattern.MatchString(str) {
		f := newFailure(loc, failPattern)
		f.got, f.want = str, []string{s.pattern.String()}
		fails = append(fails, f)
	}
	return fails
}

func (s *compiledSchema) validateNumber(v any, loc []string, fails []*failure) []*failure {
	if s.minimum == nil && s.maximum == nil && s.exclMinimum == nil {
		return fails
	}
	n := ratOf(v)
	if n == nil {
		return fails
	}
	if s.minimum != nil && n.Cmp(s.minimum) < 0 {
		fails = append(fails, otherFailure(loc, "got %s, want at least %s", englishRat(n), englishRat(s.minimum)))
	}
	if s.maximum != nil && n.Cmp(s.maximum) > 0 {
		fails = append(fails, otherFailure(loc, "got %s, want at most %s", englishRat(n), englishRat(s.maximum)))
	}
	if s.exclMinimum != nil && n.Cmp(s.exclMinimum) <= 0 {
		fails = append(fails, otherFailure(loc, "got %s, want more than %s", englishRat(n), englishRat(s.exclMinimum)))
	}
	return fails
}

func (s *compiledSchema) validateOneOf(v any, loc []string, fails []*failure) []*failure {
	matched := -1
	var alts []*failure
	for i, alt := range s.oneOf {
		f := alt.validate(v, loc)
		switch {
		case f != nil:
			if matched == -1 {
				alts = append(alts, f)
			}
		case matched == -1:
			matched = i
		default:
			return append(fails, otherFailure(loc, "'oneOf' failed, subschemas %s, %s matched", englishInt(matched), englishInt(i)))
		}
	}
	if matched == -1 {
		f := newFailure(loc, failNoneOf)
		f.causes = alts
		fails = append(fails, f)
	}
	return fails
}

// The library words numbers through golang.org/x/text/message in English,
// and operators have been reading them: "got 70,000, want at most 65,535",
// "got 7 × 10⁰⁹, want at most 3,600". englishInt and englishRat write
// numbers the same way, without linking x/text.

// englishInt is n with its thousands grouped: 12,345.
func englishInt(n int) string {
	s := strconv.Itoa(n)
	if neg := strings.HasPrefix(s, "-"); neg {
		return "-" + groupThousands(s[1:])
	}
	return groupThousands(s)
}

func groupThousands(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	first := len(digits) % 3
	if first == 0 {
		first = 3
	}
	b.WriteString(digits[:first])
	for i := first; i < len(digits); i += 3 {
		b.WriteByte(',')
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}

// englishRat is r as the library prints it: rounded to a float64, in its
// shortest digits, grouped when the exponent is from -4 to 5 and in
// scientific notation with a superscript exponent otherwise, as %g decides.
func englishRat(r *big.Rat) string {
	f, _ := r.Float64()
	return englishFloat(f)
}

func englishFloat(f float64) string {
	if f == 0 {
		return "0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	mant, exps, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(exps)
	if exp < -4 || exp >= 6 {
		var b strings.Builder
		b.WriteString(sign)
		b.WriteString(digits[:1])
		if len(digits) > 1 {
			b.WriteString("." + digits[1:])
		}
		b.WriteString("\u202f×\u202f10")
		e := strconv.Itoa(exp)
		if exp < 0 {
			e = e[1:]
		}
		if len(e) < 2 {
			e = "0" + e
		}
		if exp < 0 {
			e = "-" + e
		}
		for _, c := range e {
			b.WriteString(superscript(c))
		}
		return b.String()
	}
	var whole, frac string
	switch {
	case exp < 0:
		whole, frac = "0", strings.Repeat("0", -exp-1)+digits
	case exp+1 >= len(digits):
		whole = digits + strings.Repeat("0", exp+1-len(digits))
	default:
		whole, frac = digits[:exp+1], digits[exp+1:]
	}
	s := sign + groupThousands(whole)
	if frac != "" {
		s += "." + frac
	}
	return s
}

func superscript(c rune) string {
	if c == '-' {
		return "⁻"
	}
	return superscripts[c-'0']
}

var superscripts = [...]string{"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"}
