package actionrun

import (
	"fmt"
	"strconv"
	"strings"
)

// value is an expression's value: nil, bool, float64, string, or a
// map[string]any / []any from a context or the event.
type value = any

// evaluator resolves the contexts an expression names.
type evaluator struct {
	lookup func(path []string) (value, error)
	status string // "success" or "failure": the job's so far
}

// expand replaces each ${{ expr }} in s with its value as a string.
func (e *evaluator) expand(s string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return "", fmt.Errorf("unterminated ${{ in %q", s)
		}
		v, err := e.eval(s[i+3 : i+j])
		if err != nil {
			return "", err
		}
		b.WriteString(s[:i])
		b.WriteString(str(v))
		s = s[i+j+2:]
	}
}

// condition evaluates an if: (with or without ${{ }}); without a status
// function it means success() && (cond), as on a runner.
func (e *evaluator) condition(s string) (bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return e.status == "success", nil
	}
	if strings.HasPrefix(s, "${{") && strings.HasSuffix(s, "}}") {
		s = s[3 : len(s)-2]
	}
	v, err := e.eval(s)
	if err != nil {
		return false, err
	}
	if !strings.Contains(s, "always()") && !strings.Contains(s, "failure()") && !strings.Contains(s, "success()") && e.status != "success" {
		return false, nil
	}
	return truthy(v), nil
}

func (e *evaluator) eval(src string) (value, error) {
	p := &parser{src: src, e: e}
	p.next()
	v, err := p.or()
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", strings.TrimSpace(src), err)
	}
	if p.tok != "" {
		return nil, fmt.Errorf("expression %q: unexpected %q", strings.TrimSpace(src), p.tok)
	}
	return v, nil
}

type parser struct {
	src string
	pos int
	tok string // "" at the end
	e   *evaluator
}

func (p *parser) next() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
	if p.pos >= len(p.src) {
		p.tok = ""
		return
	}
	rest := p.src[p.pos:]
	for _, op := range []string{"||", "&&", "==", "!=", "!", "(", ")", ",", ".", "[", "]"} {
		if strings.HasPrefix(rest, op) {
			p.tok, p.pos = op, p.pos+len(op)
			return
		}
	}
	if rest[0] == '\'' {
		i := 1
		for i < len(rest) {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i += 2
					continue
				}
				break
			}
			i++
		}
		p.tok, p.pos = rest[:min(i+1, len(rest))], p.pos+min(i+1, len(rest))
		return
	}
	i := 0
	for i < len(rest) && strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", rune(rest[i])) {
		i++
	}
	if i == 0 {
		i = 1
	}
	p.tok, p.pos = rest[:i], p.pos+i
}

func (p *parser) or() (value, error) {
	v, err := p.and()
	for err == nil && p.tok == "||" {
		p.next()
		var r value
		r, err = p.and()
		if !truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *parser) and() (value, error) {
	v, err := p.cmp()
	for err == nil && p.tok == "&&" {
		p.next()
		var r value
		r, err = p.cmp()
		if truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *parser) cmp() (value, error) {
	v, err := p.unary()
	for err == nil && (p.tok == "==" || p.tok == "!=") {
		op := p.tok
		p.next()
		var r value
		if r, err = p.unary(); err == nil {
			eq := equal(v, r)
			v = eq == (op == "==")
		}
	}
	return v, err
}

func (p *parser) unary() (value, error) {
	if p.tok == "!" {
		p.next()
		v, err := p.unary()
		return !truthy(v), err
	}
	return p.primary()
}

func (p *parser) primary() (value, error) {
	tok := p.tok
	switch {
	case tok == "":
		return nil, fmt.Errorf("unexpected end")
	case tok == "(":
		p.next()
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.tok != ")" {
			return nil, fmt.Errorf("want ), got %q", p.tok)
		}
		p.next()
		return v, nil
	case tok[0] == '\'':
		p.next()
		return strings.ReplaceAll(strings.TrimSuffix(tok[1:], "'"), "''", "'"), nil
	case tok == "true" || tok == "false":
		p.next()
		return tok == "true", nil
	case tok == "null":
		p.next()
		return nil, nil
	case tok[0] >= '0' && tok[0] <= '9':
		p.next()
		f, err := strconv.ParseFloat(tok, 64)
		return f, err
	}
	p.next()
	if p.tok == "(" {
		return p.call(tok)
	}
	path := []string{tok}
	for p.tok == "." || p.tok == "[" {
		if p.tok == "." {
			p.next()
			path = append(path, p.tok)
			p.next()
			continue
		}
		p.next()
		k, err := p.primary()
		if err != nil {
			return nil, err
		}
		if p.tok != "]" {
			return nil, fmt.Errorf("want ], got %q", p.tok)
		}
		p.next()
		path = append(path, str(k))
	}
	return p.e.lookup(path)
}

func (p *parser) call(name string) (value, error) {
	p.next() // (
	var args []value
	for p.tok != ")" {
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		args = append(args, v)
		if p.tok == "," {
			p.next()
		} else if p.tok != ")" {
			return nil, fmt.Errorf("want , or ) in %s(), got %q", name, p.tok)
		}
	}
	p.next()
	want := map[string]int{"startsWith": 2, "endsWith": 2, "contains": 2, "success": 0, "always": 0, "failure": 0}
	n, ok := want[name]
	if !ok {
		return nil, fmt.Errorf("function %s() is not one this emulator knows", name)
	}
	if len(args) != n {
		return nil, fmt.Errorf("%s() takes %d arguments, got %d", name, n, len(args))
	}
	switch name {
	case "startsWith":
		return strings.HasPrefix(strings.ToLower(str(args[0])), strings.ToLower(str(args[1]))), nil
	case "endsWith":
		return strings.HasSuffix(strings.ToLower(str(args[0])), strings.ToLower(str(args[1]))), nil
	case "contains":
		return strings.Contains(strings.ToLower(str(args[0])), strings.ToLower(str(args[1]))), nil
	case "success":
		return p.e.status == "success", nil
	case "failure":
		return p.e.status == "failure", nil
	}
	return true, nil // always
}

func truthy(v value) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case float64:
		return v != 0
	case string:
		return v != ""
	}
	return true
}

// equal compares as a runner does: strings case-insensitively, other
// mixes as numbers.
func equal(a, b value) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok {
		return strings.EqualFold(as, bs)
	}
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return num(a) == num(b)
}

func num(v value) float64 {
	switch v := v.(type) {
	case bool:
		if v {
			return 1
		}
		return 0
	case float64:
		return v
	case string:
		if strings.TrimSpace(v) == "" {
			return 0
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return -1e308 // NaN: equal to nothing
		}
		return f
	}
	return -1e308
}

func str(v value) string {
	switch v := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		return v
	}
	return "Object"
}
