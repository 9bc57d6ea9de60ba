package re

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

type tmplPart struct {
	lit   string
	group int // -1 for a literal
}

func parseTemplate(repl string, re *regexp.Regexp) ([]tmplPart, error) {
	var parts []tmplPart
	var lit strings.Builder
	ref := func(g int) error {
		if g > re.NumSubexp() {
			return fmt.Errorf("invalid group reference %d", g)
		}
		if lit.Len() > 0 {
			parts = append(parts, tmplPart{lit: lit.String(), group: -1})
			lit.Reset()
		}
		parts = append(parts, tmplPart{group: g})
		return nil
	}
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' {
			lit.WriteByte(c)
			continue
		}
		if i+1 == len(repl) {
			return nil, fmt.Errorf("bad escape (end of pattern)")
		}
		i++
		switch c := repl[i]; {
		case c >= '0' && c <= '9':
			j := i + 1
			if j < len(repl) && repl[j] >= '0' && repl[j] <= '9' {
				j++
			}
			g, _ := strconv.Atoi(repl[i:j])
			if err := ref(g); err != nil {
				return nil, err
			}
			i = j - 1
		case c == 'g':
			end := strings.IndexByte(repl[i:], '>')
			if i+1 >= len(repl) || repl[i+1] != '<' || end < 0 {
				return nil, fmt.Errorf("missing group name in \\g<...>")
			}
			name := repl[i+2 : i+end]
			g, err := strconv.Atoi(name)
			if err != nil {
				g = re.SubexpIndex(name)
				if g < 0 {
					return nil, fmt.Errorf("unknown group name %q", name)
				}
			}
			if err := ref(g); err != nil {
				return nil, err
			}
			i += end
		case c == '\\':
			lit.WriteByte('\\')
		case c == 'n':
			lit.WriteByte('\n')
		case c == 't':
			lit.WriteByte('\t')
		case c == 'r':
			lit.WriteByte('\r')
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			return nil, fmt.Errorf("bad escape \\%c", c)
		default:
			lit.WriteByte('\\')
			lit.WriteByte(c)
		}
	}
	if lit.Len() > 0 {
		parts = append(parts, tmplPart{lit: lit.String(), group: -1})
	}
	return parts, nil
}
