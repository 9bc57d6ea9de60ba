package lazyregexp

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

// Regexp is a *regexp.Regexp compiled on first use. It is safe for
// concurrent use; it must be made by New.
type Regexp struct {
	str    string
	expand func(string) string // nil, or what str is spelt out with before compiling
	once   sync.Once
	rx     *regexp.Regexp
}

func (r *Regexp) re() *regexp.Regexp {
	r.once.Do(r.build)
	return r.rx
}

func (r *Regexp) build() {
	if r.expand != nil {
		r.str = r.expand(r.str)
	}
	r.rx = regexp.MustCompile(r.str)
	r.str, r.expand = "", nil
}

// inTest is whether this is a test binary (see the package comment).
var inTest = len(os.Args) > 0 && strings.HasSuffix(strings.TrimSuffix(os.Args[0], ".exe"), ".test")

// New is the expression str, compiled on first use.
func New(str string) *Regexp { return NewExpanded(str, nil) }

// NewExpanded is the expression expand(str), expand called on first use
// too: for an expression written in a shorthand that takes work to spell
// out, which a process that never uses it should not do. A nil expand
// leaves str as it is.
func NewExpanded(str string, expand func(string) string) *Regexp {
	r := &Regexp{str: str, expand: expand}
	if inTest {
		r.re()
	}
	return r
}

// String is the source text of the expression.
func (r *Regexp) String() string { return r.re().String() }

// MatchString is [regexp.Regexp.MatchString].
func (r *Regexp) MatchString(s string) bool { return r.re().MatchString(s) }

// FindString is [regexp.Regexp.FindString].
func (r *Regexp) FindString(s string) string { return r.re().FindString(s) }

// FindStringIndex is [regexp.Regexp.FindStringIndex].
func (r *Regexp) FindStringIndex(s string) []int { return r.re().FindStringIndex(s) }

// FindStringSubmatch is [regexp.Regexp.FindStringSubmatch].
func (r *Regexp) FindStringSubmatch(s string) []string { return r.re().FindStringSubmatch(s) }

// FindAllStringSubmatch is [regexp.Regexp.FindAllStringSubmatch].
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.re().FindAllStringSubmatch(s, n)
}

// ReplaceAllString is [regexp.Regexp.ReplaceAllString].
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.re().ReplaceAllString(src, repl)
}

// ReplaceAllStringFunc is [regexp.Regexp.ReplaceAllStringFunc].
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.re().ReplaceAllStringFunc(src, repl)
}
