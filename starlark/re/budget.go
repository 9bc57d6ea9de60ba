package re

import (
	"errors"

	"go.starlark.net/starlark"
)

// Budget bounds what one call of the module may spend. A host lends one to
// a thread with SetBudget; its methods are called on that thread's
// goroutine only.
type Budget interface {
	// Charge adds steps of work done on the thread's behalf; an error
	// stops the call with it.
	Charge(thread *starlark.Thread, steps uint64, what func() string) error
	// Allow reports whether allocating about bytes may go ahead; an error
	// refuses it.
	Allow(bytes uint64, what func() string) error
	// Allowance is how many bytes the call may still allocate.
	Allowance() uint64
	// Refuse stops the call as one that would allocate past its
	// allowance, saying what would have.
	Refuse(what func() string) error
}

const budgetKey = "re.budget"

// SetBudget makes b bound every call of the module on thread.
func SetBudget(thread *starlark.Thread, b Budget) { thread.SetLocal(budgetKey, b) }

func budgetOf(thread *starlark.Thread) Budget {
	if b, ok := thread.Local(budgetKey).(Budget); ok && b != nil {
		return b
	}
	return unbounded{}
}

// unbounded is the Budget of a thread that was lent none.
type unbounded struct{}

func (unbounded) Charge(*starlark.Thread, uint64, func() string) error { return nil }
func (unbounded) Allow(uint64, func() string) error                    { return nil }
func (unbounded) Allowance() uint64                                    { return 1 << 62 }
func (unbounded) Refuse(what func() string) error                      { return errors.New(what()) }
