package policy

// The oracle: the general JSON Schema library the CLI validated configs
// with before jsonschema.go, and the code that worded its errors, kept
// here (and only here: the binary does not link the library) so that the
// tests can hold the two to the same verdicts and the same messages.

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"gopkg.in/yaml.v3"

	"github.com/the-loop/the-loop/graph"
)

// jsonschemaSchema is the library's compiled schema, named so that the
// tests beside this file need not import the library themselves.
type jsonschemaSchema = jsonschema.Schema

var (
	oracleHarness = sync.OnceValues(func() (*jsonschema.Schema, error) {
		return oracleCompile(harnessSchemaURL, harnessSchemaJSON)
	})
	oracleCLI = sync.OnceValues(func() (*jsonschema.Schema, error) {
		return oracleCompile(cliSchemaURL, cliSchemaJSON)
	})
)

func oracleCompile(url string, src []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("embedded schema %s: %w", url, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("embedded schema %s: %w", url, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("embedded schema %s: %w", url, err)
	}
	return s, nil
}

// oracleValidateDoc is validateDoc as it was with the library.
func oracleValidateDoc(schema func() (*jsonschema.Schema, error), doc any, file string, top *yaml.Node) error {
	s, err := schema()
	if err != nil {
		return err
	}
	err = s.Validate(doc)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return &graph.ConfigError{File: file, Msg: "cannot be checked against the schema", Err: err}
	}
	return oracleSchemaError(verr, doc, file, top)
}

// oracleSchemaError turns the validator's error tree into one ConfigError naming the
// first problem (in document order) and summarising the rest.
func oracleSchemaError(verr *jsonschema.ValidationError, doc any, file string, top *yaml.Node) error {
	var leaves []*jsonschema.ValidationError
	var collect func(e *jsonschema.ValidationError)
	collect = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		causes := e.Causes
		if oracleAlternatives(e) {
			causes = oraclePruneAlternatives(e)
		}
		for _, c := range causes {
			collect(c)
		}
	}
	collect(verr)

	probs := make([]problem, 0, len(leaves))
	for _, l := range leaves {
		probs = append(probs, oracleDescribe(l, doc, top))
	}
	return summarise(probs, file)
}

// oracleAlternatives reports whether e is a oneOf or anyOf that no alternative
// satisfied, its causes being the alternatives' own failures.
func oracleAlternatives(e *jsonschema.ValidationError) bool {
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf:
		return true
	case *kind.OneOf:
		return len(k.Subschemas) == 0
	}
	return false
}

// oraclePruneAlternatives keeps the failures an operator can act on when a value
// fits none of several shapes (a person entry is a string or a mapping).
// An alternative refused only for the value's type says nothing once
// another alternative had the right type and failed deeper: that deeper
// failure ("slack: got number, want string") is the one to report. When
// every alternative refused the type, the result is one type error naming
// every type wanted ("got number, want string or object") rather than one
// per alternative.
func oraclePruneAlternatives(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	var kept []*jsonschema.ValidationError
	merged := &kind.Type{}
	for _, c := range e.Causes {
		t, ok := oracleWrongType(c, e.InstanceLocation)
		if !ok {
			kept = append(kept, c)
			continue
		}
		merged.Got = t.Got
		for _, w := range t.Want {
			if !slices.Contains(merged.Want, w) {
				merged.Want = append(merged.Want, w)
			}
		}
	}
	if len(kept) > 0 {
		return kept
	}
	return []*jsonschema.ValidationError{{
		SchemaURL:        e.SchemaURL,
		InstanceLocation: e.InstanceLocation,
		ErrorKind:        merged,
	}}
}

// oracleWrongType returns the type error that is an alternative's only failure,
// when it concerns the value at loc itself.
func oracleWrongType(e *jsonschema.ValidationError, loc []string) (*kind.Type, bool) {
	for len(e.Causes) == 1 {
		e = e.Causes[0]
	}
	t, ok := e.ErrorKind.(*kind.Type)
	if !ok || len(e.Causes) > 0 || !slices.Equal(e.InstanceLocation, loc) {
		return nil, false
	}
	return t, true
}

// oracleDescribe phrases one leaf error in the project's "got X, want Y" style.
func oracleDescribe(e *jsonschema.ValidationError, doc any, top *yaml.Node) problem {
	path := e.InstanceLocation
	p := problem{key: dottedKey(path, doc)}
	p.line = lineOf(top, path, "")
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		props := slices.Clone(k.Properties)
		slices.Sort(props)
		if len(props) == 1 {
			p.key = joinKey(p.key, props[0])
			p.line = lineOf(top, path, props[0])
			p.msg = "unknown key; the schema does not allow it here"
		} else {
			p.line = lineOf(top, path, props[0])
			p.msg = "unknown keys " + quoteList(props) + "; the schema does not allow them here"
		}
		p.msg += misplaced(path, props)
	case *kind.Required:
		if len(k.Missing) == 1 {
			p.msg = fmt.Sprintf("missing required key %q", k.Missing[0])
		} else {
			p.msg = "missing required keys " + quoteList(k.Missing)
		}
	case *kind.Type:
		p.msg = fmt.Sprintf("got %s, want %s", k.Got, strings.Join(k.Want, " or "))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprintf("%v", w)
			if s, ok := w.(string); ok {
				want[i] = strconv.Quote(s)
			}
		}
		p.msg = fmt.Sprintf("got %s, want one of %s", gotValue(k.Got), strings.Join(want, ", "))
	case *kind.Pattern:
		p.msg = fmt.Sprintf("got %q, want a value matching %s", k.Got, k.Want)
	case *kind.Minimum:
		p.msg = asBound(libraryMessage(e), "minimum", "at least")
	case *kind.Maximum:
		p.msg = asBound(libraryMessage(e), "maximum", "at most")
	case *kind.ExclusiveMinimum:
		// The library says "exclusiveMinimum: got 0, want 0" of a 0 where
		// more than 0 is wanted.
		p.msg = asBound(libraryMessage(e), "exclusiveMinimum", "more than")
	default:
		p.msg = libraryMessage(e)
	}
	return p
}

// libraryMessage is the library's message for e, without its location.
func libraryMessage(e *jsonschema.ValidationError) string {
	msg := e.Error()
	if strings.HasPrefix(msg, "at '") {
		if i := strings.Index(msg, "': "); i >= 0 {
			msg = msg[i+3:]
		}
	}
	return msg
}

// asBound is the library's "keyword: got X, want Y" as our validator says
// it: "got X, want <relation> Y", the numbers written as the library
// writes them.
func asBound(msg, keyword, relation string) string {
	return strings.Replace(strings.TrimPrefix(msg, keyword+": "), ", want ", ", want "+relation+" ", 1)
}
