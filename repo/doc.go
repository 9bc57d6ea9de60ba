// Package repo is one checkout, confined: the directory tree a verb judges,
// and the only way the rest of the-loop opens, reads, lists, stats, locks
// or writes a file in it.
//
// In CI the checkout is the change under review, so every byte of it is an
// attacker's: a link pointing out of the tree, a FIFO where a state file
// should be, a sparse file of gigabytes, a folder name holding a path. A
// [Checkout] answers all of them the same way, in one place:
//
//   - Paths are repository-relative and slash-separated. An absolute path,
//     a ".." that leaves the root, and a symbolic link whose target lies
//     outside it are refused with [ErrOutside]. A link that stays inside is
//     followed.
//   - A read is of a regular file only ([ErrNotRegular] otherwise), opened
//     without blocking (a FIFO cannot hang it) and bounded: a file over the
//     caller's limit is refused by its size before a byte is read
//     ([*TooLargeError]).
//   - Writes are atomic (a synced temporary file beside the target, then a
//     rename) and never go through a link; [Checkout.CleanTemps] removes what
//     a killed writer left behind. [Checkout.AppendFile] adds a record to
//     an append-only file with one synced write, refusing a link.
//
// Errors are *fs.PathError values naming the repository-relative path, so
// a message says which file without saying where the checkout lives on the
// machine.
//
// On Linux reads resolve with openat2(RESOLVE_BENEATH) on a descriptor of the
// root: the kernel refuses an escape in the same call that opens the file,
// so a tree changed underneath cannot race the check. Elsewhere, or where a
// seccomp filter refuses openat2, the same rules hold through [os.Root].
//
// To read many files one after another, as a rule over a source tree
// does, use a [Reader]: on Linux, from the second file of a directory on,
// it opens the files from a descriptor of that directory, itself opened
// beneath the root, by their one name and refusing a link; a link, or
// anything else that open refuses, is read again from the root, so that
// what it answers is a read's answer. A directory moved away while a
// Reader holds it is still read from: it was inside the checkout when
// opened, and what it holds since is what a process able to move it could
// as well have put in the checkout.
//
// To open the repository a verb runs in, use [Find] then [Open]; to address
// a work item, [Checkout.WithSpecDir] then [Checkout.Item].
//
// To compare with a git revision, [Checkout.Changes] lists the paths a
// change makes since a base, and [Checkout.Revision] reads the files a
// commit holds from git's object store, following no link and looking up
// only the paths it is asked about. Both run the git binary, write
// nothing to the repository, and fail with a one-line [*GitError]. Both
// resolve the revision they are given once, to a commit, and refuse a
// name that more than one ref could stand for (a tag "origin/main" beside
// the remote-tracking branch), which git would otherwise settle by its
// own order; a ref named in full is taken as it is. Changes starts no
// filter, textconv or diff driver, whatever the checkout's .gitattributes
// selects. [Checkout.MergeBase], [Checkout.Renames] and [Checkout.Added]
// tell how a change moved files between two commits.
//
// Every git process starts in one place, with replace refs and grafts off
// and nothing git could run switched on (no hook, fsmonitor, pager,
// transport or credential helper), whatever the repository's .git holds;
// [Git] runs one for a caller with a repository of its own.
//
// [InMemory] is a Checkout whose files are held in memory, for a rule's
// test: the same Clean confines it, and every write is refused with
// [ErrReadOnly].
//
// A Checkout is immutable and safe for concurrent use. This package
// imports nothing else of the-loop's.
package repo
