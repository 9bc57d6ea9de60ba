package channels

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// Ref names a work item on GitHub, as the original tool and the event log
// write it: github:OWNER/REPO#N. The zero value names nothing.
type Ref struct {
	Owner  string
	Repo   string
	Number int
}

// ParseRef reads github:OWNER/REPO#N as strictly as graph.ParseRef, whose
// *graph.RefError it returns. ParseRef(s).String() is s for every s it
// accepts.
func ParseRef(s string) (Ref, error) {
	owner, repo, n, err := graph.ParseRef(s)
	if err != nil {
		return Ref{}, err
	}
	return Ref{Owner: owner, Repo: repo, Number: n}, nil
}

// String is the ref as written: github:OWNER/REPO#N.
func (r Ref) String() string {
	if r.IsZero() {
		return ""
	}
	return fmt.Sprintf("github:%s/%s#%d", r.Owner, r.Repo, r.Number)
}

// IsZero reports whether r names nothing.
func (r Ref) IsZero() bool { return r == Ref{} }

// Repository is OWNER/REPO.
func (r Ref) Repository() string { return r.Owner + "/" + r.Repo }

// Key identifies the work item whatever case its owner and repository are
// written in: GitHub's names are case-insensitive, and an operator, a
// webhook and a closing keyword may each spell one differently.
func (r Ref) Key() string { return strings.ToLower(r.String()) }

// SameRepository reports whether r and o are in the same repository.
func (r Ref) SameRepository(o Ref) bool {
	return strings.EqualFold(r.Repository(), o.Repository())
}

// ItemID is the spec folder the work item lives in, issue-N: the
// convention by which the ingress and the graph name the same work item.
func (r Ref) ItemID() string { return "issue-" + strconv.Itoa(r.Number) }
