package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gopkg.in/yaml.v3"

	"github.com/the-loop/the-loop/graph"
)

// TestSchemasUseOnlyWhatTheValidatorImplements: both embedded schemas
// compile, which they do only if every keyword in them is one
// jsonschema.go implements. A schema that grows a keyword fails here, not
// silently in the field.
func TestSchemasUseOnlyWhatTheValidatorImplements(t *testing.T) {
	for name, src := range map[string][]byte{"harness": harnessSchemaJSON, "cli": cliSchemaJSON} {
		if _, err := compileSchema(name, src); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCompileSchemaRefusesWhatItDoesNotImplement(t *testing.T) {
	for _, src := range []string{
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "const": 1}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "properties": {"a": {"anyOf": [{"type": "string"}]}}}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {"unused": {"if": {}}}}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "items": {"maxLength": 3}}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "patternProperties": {}}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "other.json#/$defs/a"}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "#/$defs/missing"}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"oneOf": [{"$ref": "#/$defs/a"}]}}}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "properties": {"a": {"$id": "x"}}}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "enum": [[1]]}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "decimal"}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "minLength": -1}`,
		`{"$schema": "http://json-schema.org/draft-07/schema#"}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "items": true}`,
	} {
		if _, err := compileSchema("test", []byte(src)); err == nil {
			t.Errorf("compiled %s", src)
		}
	}
}

// TestEnglishNumbersAreThePrinters: messages word numbers as the library's
// x/text printer did, without linking x/text.
func TestEnglishNumbersAreThePrinters(t *testing.T) {
	p := message.NewPrinter(language.English)
	floats := []float64{0, 1, -1, 5, 0.5, 3600, 65535, 1e12, 1e12 + 1, 7e9, 1e-4, 1e-5, 1.5e-7, 123456.5,
		999999, 1e6, 1234567.25, 1e21, 1e100, 1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64,
		float64(math.MaxInt64), float64(math.MaxUint64), -0.001, -123456789, 0.1 + 0.2}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		floats = append(floats, r.NormFloat64()*math.Pow(10, float64(r.IntN(40)-20)),
			float64(r.Int64N(1<<53)-1<<52), math.Float64frombits(r.Uint64()))
	}
	for _, f := range floats {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		want := p.Sprintf("%v", f)
		if got := englishFloat(f); got != want {
			t.Fatalf("englishFloat(%v) = %q, want %q", f, got, want)
		}
		if got := englishRat(new(big.Rat).SetFloat64(f)); got != want {
			t.Fatalf("englishRat(%v) = %q, want %q", f, got, want)
		}
	}
	for _, n := range []int{0, 1, -1, 999, 1000, -1000, 12345, 123456, 1234567, math.MaxInt, math.MinInt} {
		if got, want := englishInt(n), p.Sprintf("%d", n); got != want {
			t.Errorf("englishInt(%d) = %q, want %q", n, got, want)
		}
	}
}

// sameVerdict fails t unless ours and the oracle's results agree: both
// nil, or both a *graph.ConfigError at the same line and key with the same
// message.
func sameVerdict(t testing.TB, what string, ours, oracle error) {
	t.Helper()
	if (ours == nil) != (oracle == nil) {
		t.Fatalf("%s: validator says %v, the library says %v", what, ours, oracle)
	}
	if ours == nil {
		return
	}
	var a, b *graph.ConfigError
	if !errors.As(ours, &a) || !errors.As(oracle, &b) {
		t.Fatalf("%s: got %T and %T, want two *graph.ConfigError", what, ours, oracle)
	}
	if a.File != b.File || a.Line != b.Line || a.Key != b.Key || a.Msg != b.Msg {
		t.Fatalf("%s:\nvalidator: %s (line %d, key %q)\nlibrary:   %s (line %d, key %q)",
			what, ours, a.Line, a.Key, oracle, b.Line, b.Key)
	}
}

// decodeSchema decodes a schema document as the compiler reads it:
// numbers as json.Number, so that bounds are exact.
func decodeSchema(src []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// compileSchema decodes and compiles a schema document, as the shipped
// ones were before schemas_decoded.go held them decoded.
func compileSchema(url string, src []byte) (*compiledSchema, error) {
	doc, err := decodeSchema(src)
	if err != nil {
		return nil, fmt.Errorf("embedded schema %s: %w", url, err)
	}
	return compileDecoded(url, doc)
}

// agree validates doc (with the YAML node it came from, or nil) against
// both schemas with both validators, and reports whether any refused it.
func agree(t testing.TB, what string, doc any, top *yaml.Node) (refused bool) {
	t.Helper()
	for _, s := range []struct {
		name   string
		ours   func() (*compiledSchema, error)
		oracle func() (*jsonschemaSchema, error)
	}{{"harness", harnessSchema, oracleHarness}, {"cli", cliSchema, oracleCLI}} {
		ours := validateDoc(s.ours, doc, "f.yaml", top)
		sameVerdict(t, what+" against the "+s.name+" schema", ours, oracleValidateDoc(s.oracle, doc, "f.yaml", top))
		refused = refused || ours != nil
	}
	return refused
}

type configDoc struct {
	name string
	data []byte
}

// fixtureConfigs are every config this repository and the original tool
// hold: the fixtures, the demo, the fixture repositories, the default, every
// YAML file in a CLI script, and the original project's configs (when its
// mirror is here).
func fixtureConfigs(t testing.TB) []configDoc {
	t.Helper()
	var docs []configDoc
	add := func(pattern string) {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, configDoc{p, data})
		}
	}
	add(filepath.Join(fixtureDir, "*", "*.yaml"))
	add(filepath.Join("..", "examples", "*", ".the-loop", "*.yaml"))
	add(filepath.Join("..", "testdata", "repos", "*", ".the-loop", "*.yaml"))
	add(filepath.Join("..", "graphs", "*.yaml"))
	scripts, _ := filepath.Glob(filepath.Join("..", "testdata", "script", "*.txtar"))
	for _, s := range scripts {
		a, err := txtar.ParseFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if strings.HasSuffix(f.Name, ".yaml") || strings.HasSuffix(f.Name, ".yml") {
				docs = append(docs, configDoc{s + ":" + f.Name, f.Data})
			}
		}
	}
	if _, err := os.Stat(mirror); err == nil {
		if _, err := exec.LookPath("git"); err == nil {
			out, _ := exec.Command("git", "-C", mirror, "ls-tree", "-r", "--name-only", "HEAD").Output()
			for p := range strings.SplitSeq(string(out), "\n") {
				if !strings.HasSuffix(p, ".yaml") || !(strings.Contains(p, "config") || strings.HasPrefix(p, ".the-loop/")) {
					continue
				}
				data, err := exec.Command("git", "-C", mirror, "show", "HEAD:"+p).Output()
				if err == nil {
					docs = append(docs, configDoc{"mirror:" + p, data})
				}
			}
		}
	}
	return docs
}

// TestValidatorAgreesWithTheLibraryOnEveryFixture: every config we and
// the original tool have, against both schemas, gets the same verdict and
// the same message from jsonschema.go and from the library.
func TestValidatorAgreesWithTheLibraryOnEveryFixture(t *testing.T) {
	docs := fixtureConfigs(t)
	checked, refused := 0, 0
	for _, d := range docs {
		doc, top, err := parseMapping(d.data, "f.yaml")
		if err != nil {
			continue
		}
		checked++
		if agree(t, d.name, doc, top) {
			refused++
		}
		if agree(t, d.name+" (no YAML node)", doc, nil) {
			refused++
		}
	}
	t.Logf("%d documents, %d refusals", checked, refused)
	if checked < 50 || refused == 0 {
		t.Fatalf("only %d documents (%d refusals): the fixtures were not found", checked, refused)
	}
}

// schemaVocabulary is every property name and string enum member in the
// embedded schemas: what a mutation writes to reach deep into them.
func schemaVocabulary(t testing.TB) []string {
	t.Helper()
	set := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if props, ok := e.(map[string]any); ok && k == "properties" {
					for name := range props {
						set[name] = true
					}
				}
				if list, ok := e.([]any); ok && k == "enum" {
					for _, m := range list {
						if s, ok := m.(string); ok {
							set[s] = true
						}
					}
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, src := range [][]byte{harnessSchemaJSON, cliSchemaJSON} {
		var doc any
		if err := json.Unmarshal(src, &doc); err != nil {
			t.Fatal(err)
		}
		walk(doc)
	}
	return slices.Sorted(maps.Keys(set))
}

// mutator changes a decoded config at random, towards what the schemas
// check: other types, out-of-range numbers, near-miss strings, unknown and
// missing keys, duplicates.
type mutator struct {
	r     *rand.Rand
	vocab []string
}

func (m *mutator) key() string {
	if m.r.IntN(4) == 0 {
		return []string{"bogus", "", "a': b", "~0/1", "x-rule", "ü", "1", "modules", "attach"}[m.r.IntN(9)]
	}
	return m.vocab[m.r.IntN(len(m.vocab))]
}

func (m *mutator) value(depth int) any {
	switch n := m.r.IntN(14); {
	case n == 0:
		return nil
	case n == 1:
		return m.r.IntN(2) == 0
	case n == 2:
		return []int{0, -1, 1, 2, 5, 6, 3600, 3601, 65535, 65536, 1000, 100000}[m.r.IntN(12)]
	case n == 3:
		return []any{int64(1e12), int64(1e12 + 1), uint64(math.MaxUint64), int64(math.MinInt64), m.r.Int64() - m.r.Int64()}[m.r.IntN(5)]
	case n == 4:
		return []float64{0, 0.5, -0.5, 1.0, 1e-7, 7e9, 3600.5, 1e300, -1e-300, 4.5, m.r.NormFloat64() * 1e6}[m.r.IntN(11)]
	case n <= 8:
		return m.key()
	case n == 9:
		return []string{"", "x-", "x-rule", "y-rule", "/", "gh-webhook", "a': b", "Ab", "a-b", strings.Repeat("a", 41)}[m.r.IntN(10)]
	case n <= 11 && depth < 4:
		list := make([]any, m.r.IntN(4))
		for i := range list {
			list[i] = m.value(depth + 1)
		}
		if len(list) > 1 && m.r.IntN(2) == 0 {
			list[len(list)-1] = list[0]
		}
		return list
	case depth < 4:
		obj := map[string]any{}
		for range m.r.IntN(4) {
			obj[m.key()] = m.value(depth + 1)
		}
		return obj
	}
	return m.key()
}

// mutate changes one place in v, somewhere below it, and returns v (or
// its replacement).
func (m *mutator) mutate(v any, depth int) any {
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		if len(keys) > 0 && m.r.IntN(3) != 0 {
			k := keys[m.r.IntN(len(keys))]
			v[k] = m.mutate(v[k], depth+1)
			return v
		}
		switch {
		case len(keys) > 0 && m.r.IntN(3) == 0:
			delete(v, keys[m.r.IntN(len(keys))])
		default:
			v[m.key()] = m.value(depth + 1)
		}
		return v
	case []any:
		if len(v) > 0 && m.r.IntN(3) != 0 {
			i := m.r.IntN(len(v))
			v[i] = m.mutate(v[i], depth+1)
			return v
		}
		switch {
		case len(v) > 0 && m.r.IntN(2) == 0:
			return append(v, v[m.r.IntN(len(v))])
		case len(v) > 0 && m.r.IntN(2) == 0:
			return v[:len(v)-1]
		}
		return append(v, m.value(depth+1))
	}
	if depth > 0 && m.r.IntN(3) == 0 {
		return v
	}
	return m.value(depth)
}

// generator writes documents from a schema: mostly what it allows, with
// now and then a value it refuses (the wrong type, a number past a bound,
// an empty string, an unknown or missing key, a duplicate item), so that
// every keyword's failure is met, alone and in company.
type generator struct {
	m    *mutator
	defs map[string]any
}

func (g *generator) odd() bool { return g.m.r.IntN(12) == 0 }

func (g *generator) gen(schema map[string]any, depth int) any {
	r := g.m.r
	if ref, ok := schema["$ref"].(string); ok {
		def := g.defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		merged := maps.Clone(def)
		for k, v := range schema {
			if k != "$ref" {
				merged[k] = v
			}
		}
		schema = merged
	}
	if g.odd() || depth > 8 {
		return g.m.value(depth)
	}
	if alts, ok := schema["oneOf"].([]any); ok {
		return g.gen(alts[r.IntN(len(alts))].(map[string]any), depth)
	}
	if enum, ok := schema["enum"].([]any); ok {
		return enum[r.IntN(len(enum))]
	}
	typ, _ := schema["type"].(string)
	if list, ok := schema["type"].([]any); ok {
		typ = list[r.IntN(len(list))].(string)
	}
	switch typ {
	case "object":
		obj := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		required, _ := schema["required"].([]any)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if (slices.Contains(required, any(name)) && !g.odd()) || r.IntN(3) == 0 {
				obj[name] = g.gen(props[name].(map[string]any), depth+1)
			}
		}
		if extra, ok := schema["additionalProperties"].(map[string]any); ok {
			for range r.IntN(3) {
				obj[g.m.key()] = g.gen(extra, depth+1)
			}
		} else if g.odd() {
			obj[g.m.key()] = g.m.value(depth + 1)
		}
		return obj
	case "array":
		items, _ := schema["items"].(map[string]any)
		list := make([]any, r.IntN(4))
		for i := range list {
			list[i] = g.gen(items, depth+1)
		}
		if len(list) > 1 && g.odd() {
			list[len(list)-1] = list[0]
		}
		return list
	case "string":
		if pat, ok := schema["pattern"].(string); ok && !g.odd() {
			if strings.HasPrefix(pat, "^x-") {
				return "x-" + g.m.key()
			}
			return []string{"/gh", "ok-name", "a", "0-1"}[r.IntN(4)]
		}
		if _, ok := schema["minLength"]; ok && g.odd() {
			return ""
		}
		return g.m.key()
	case "integer", "number":
		num := func(k string) (float64, bool) {
			n, ok := schema[k].(float64)
			return n, ok
		}
		lo, hasLo := num("minimum")
		if x, ok := num("exclusiveMinimum"); ok {
			lo, hasLo = x, true
		}
		hi, hasHi := num("maximum")
		switch {
		case hasLo && g.odd():
			return lo - float64(r.IntN(2))
		case hasHi && g.odd():
			return int64(hi) + 1
		case typ == "integer" && g.odd():
			return 2.5
		case hasLo && hasHi:
			return int64(lo) + r.Int64N(int64(hi-lo)+1)
		case hasLo:
			return int64(lo) + r.Int64N(100)
		}
		return r.IntN(100) - 50
	case "boolean":
		return r.IntN(2) == 0
	}
	return g.m.value(depth)
}

// mutationCheck makes a document as seed says, by mutating one of the
// fixture documents or writing one from a schema, and holds both
// validators to the same verdict on it, as it is and written out as YAML
// and read back (which gives every failure a line).
func mutationCheck(t testing.TB, docs []configDoc, vocab []string, seed uint64) {
	m := &mutator{r: rand.New(rand.NewPCG(seed, 7)), vocab: vocab}
	var v any
	var what string
	if seed%2 == 0 {
		d := docs[seed/2%uint64(len(docs))]
		doc, _, err := parseMapping(d.data, "f.yaml")
		if err != nil {
			return
		}
		v = doc
		for range 1 + m.r.IntN(6) {
			v = m.mutate(v, 0)
		}
		what = fmt.Sprintf("%s mutated by seed %d", d.name, seed)
	} else {
		name, src := "harness", harnessSchemaJSON
		if seed%4 == 3 {
			name, src = "cli", cliSchemaJSON
		}
		var schema map[string]any
		if err := json.Unmarshal(src, &schema); err != nil {
			t.Fatal(err)
		}
		g := &generator{m: m, defs: schema["$defs"].(map[string]any)}
		v = g.gen(schema, 0)
		what = fmt.Sprintf("a %s document written by seed %d", name, seed)
	}
	agree(t, what, v, nil)
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	doc, top, err := parseMapping(out, "f.yaml")
	if err != nil {
		return
	}
	agree(t, what+", as YAML:\n"+string(out), doc, top)
}

// parsableConfigs are the fixture configs that parse.
func parsableConfigs(t testing.TB) []configDoc {
	var docs []configDoc
	for _, d := range fixtureConfigs(t) {
		if _, _, err := parseMapping(d.data, "f.yaml"); err == nil {
			docs = append(docs, d)
		}
	}
	return docs
}

func TestValidatorAgreesWithTheLibraryOnMutations(t *testing.T) {
	docs, vocab := parsableConfigs(t), schemaVocabulary(t)
	n := uint64(4000)
	if testing.Short() {
		n = 400
	}
	for seed := range n {
		mutationCheck(t, docs, vocab, seed)
	}
}

// FuzzSchemaValidator mutates the fixture configs (go test -fuzz).
func FuzzSchemaValidator(f *testing.F) {
	docs, vocab := parsableConfigs(f), schemaVocabulary(f)
	for seed := range uint64(16) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { mutationCheck(t, docs, vocab, seed) })
}

// FuzzSchemaValidatorBytes holds both validators to the same verdict on
// whatever YAML the fuzzer writes.
func FuzzSchemaValidatorBytes(f *testing.F) {
	for _, d := range parsableConfigs(f) {
		f.Add(d.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, top, err := parseMapping(data, "f.yaml")
		if err != nil {
			return
		}
		agree(t, fmt.Sprintf("%q", data), doc, top)
	})
}

// BenchmarkCompileSchemas is what a verb that validates both configs pays
// once per process, building each document from schemas_decoded.go and
// compiling it; BenchmarkCompileSchemasFromJSON is what decoding the JSON
// instead would pay, and BenchmarkCompileSchemasLibrary what the library
// paid.
func BenchmarkCompileSchemas(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compileDecoded(harnessSchemaURL, decodedSchema(harnessSchemaURL)); err != nil {
			b.Fatal(err)
		}
		if _, err := compileDecoded(cliSchemaURL, decodedSchema(cliSchemaURL)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompileSchemasFromJSON(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compileSchema(harnessSchemaURL, harnessSchemaJSON); err != nil {
			b.Fatal(err)
		}
		if _, err := compileSchema(cliSchemaURL, cliSchemaJSON); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompileSchemasLibrary(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := oracleCompile(harnessSchemaURL, harnessSchemaJSON); err != nil {
			b.Fatal(err)
		}
		if _, err := oracleCompile(cliSchemaURL, cliSchemaJSON); err != nil {
			b.Fatal(err)
		}
	}
}
