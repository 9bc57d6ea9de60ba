package github

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/the-loop/the-loop/repo"
)

// Who the integration is. the-loop posts with the operator's credential,
// so by author alone its comments are the operator's; the self-authored
// marker tells them apart, and so does the login the credential
// authenticates: a comment by that login is the-loop's own even when it
// carries no marker (one posted by an older build, by hand, or by a path
// that forgot it). Identity learns the login once, with GET /user, and
// keeps it in the operator's state root, so that check, serve and every
// verb agree on it without asking again.

// IdentityFile is where the integration keeps the logins its credentials
// authenticate, below the state root.
const IdentityFile = "github/identity.json"

// identityVersion is the format of IdentityFile this build reads and
// writes.
const identityVersion = 1

// maxIdentityFile bounds a read of IdentityFile; maxIdentities bounds
// what it keeps, the most recently asked first.
const (
	maxIdentityFile = 1 << 20
	maxIdentities   = 32
)

// identityDoc is IdentityFile.
type identityDoc struct {
	Version    int              `json:"version"`
	Identities []identityRecord `json:"identities"`
}

// identityRecord is one credential's answer to GET /user.
type identityRecord struct {
	// Credential names the credential without revealing it: the
	// transport, the API root or the gh binary, and a digest (see
	// transport.credential).
	Credential string `json:"credential"`
	// Login is the login GitHub answered; "" when the credential is no
	// user's (a GitHub App's installation token).
	Login string `json:"login"`
	// AskedAt is when GitHub was asked, RFC 3339 UTC.
	AskedAt string `json:"askedAt"`
}

// self is what an Integration knows of its own identity. sem, buffered
// one, lets one caller ask at a time, and a waiting caller give up with
// its context.
type self struct {
	sem   chan struct{}
	known bool
	login string
}

func newSelf() *self { return &self{sem: make(chan struct{}, 1)} }

// opUser names GET /user in errors.
const opUser = "get-user"

// User asks GitHub which account the credential authenticates (GET
// /user) and returns its login. It asks every time; Identity keeps the
// answer.
func (in *Integration) User(ctx context.Context) (string, error) {
	if in.transport == nil {
		return "", fmt.Errorf("github %s: %w", opUser, in.unavailable)
	}
	r := request{op: opUser, method: http.MethodGet, path: "/user", repeatable: true}
	var u struct {
		Login string `json:"login"`
	}
	if err := in.transport.do(ctx, r, &u); err != nil {
		return "", err
	}
	if strings.TrimSpace(u.Login) == "" {
		return "", r.fail(0, "the answer names no login", nil)
	}
	return u.Login, nil
}

// Identity is the login of the account the integration's credential
// authenticates: the author of every comment the-loop posts through it.
// "" with a nil error means the credential is no user's: GitHub answered
// GET /user 403 or 404, as it does for a GitHub App's installation token,
// whose comments are its bot's.
//
// GitHub is asked once per credential: the answer is kept in memory and,
// with Options.StateRoot, in IdentityFile there, written atomically, so
// another process using the same credential reads it instead of asking.
// The file names a credential by a digest, never the token. An error
// (GitHub unreachable, the token refused, no transport) is kept nowhere:
// the next call asks again. The file not being readable or writable is
// logged and costs only the question. It is safe for concurrent use;
// concurrent callers ask once between them.
//
// Departure from the original (docs/compatibility.md#a-comment-by-the-tokens-own-login-is-self-authored-marker-or-not): the token's own login is learned from GET /user; the original knows only its marker.
func (in *Integration) Identity(ctx context.Context) (string, error) {
	if in.transport == nil {
		return "", fmt.Errorf("github %s: %w", opUser, in.unavailable)
	}
	select {
	case in.self.sem <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("github %s: %w", opUser, ctx.Err())
	}
	defer func() { <-in.self.sem }()
	if in.self.known {
		return in.self.login, nil
	}
	cred := in.transport.credential()
	if login, ok := in.keptIdentity(cred); ok {
		in.self.known, in.self.login = true, login
		return login, nil
	}
	login, err := in.User(ctx)
	var ge *Error
	switch {
	case err == nil:
	case errors.As(err, &ge) && !ge.RateLimited && (ge.Status == http.StatusForbidden || ge.Status == http.StatusNotFound):
		in.log.Info("the GitHub credential is no user's (GET /user refused it, as GitHub does a GitHub App's token): only the-loop's marker tells its comments apart", "status", ge.Status)
		login = ""
	default:
		return "", err
	}
	in.self.known, in.self.login = true, login
	in.keepIdentity(cred, login)
	return login, nil
}

// keptIdentity is the login IdentityFile keeps for cred.
func (in *Integration) keptIdentity(cred string) (string, bool) {
	if in.stateRoot == "" {
		return "", false
	}
	doc, err := readIdentities(in.stateRoot)
	if err != nil {
		in.log.Warn("could not read the kept GitHub identity; asking GitHub again", "file", in.identityPath(), "err", err)
		return "", false
	}
	for _, r := range doc.Identities {
		if r.Credential == cred {
			return r.Login, true
		}
	}
	return "", false
}

// keepIdentity writes cred's login into IdentityFile, first among the
// records kept. Two processes writing at once may lose one's record,
// which costs that credential one more question.
func (in *Integration) keepIdentity(cred, login string) {
	if in.stateRoot == "" {
		return
	}
	if err := writeIdentity(in.stateRoot, identityRecord{Credential: cred, Login: login, AskedAt: in.now().UTC().Format(time.RFC3339)}); err != nil {
		in.log.Warn("could not keep the GitHub identity in the state root; it will be asked again", "file", in.identityPath(), "err", err)
	}
}

func (in *Integration) identityPath() string {
	return filepath.Join(in.stateRoot, filepath.FromSlash(IdentityFile))
}

// readIdentities reads IdentityFile under root; a missing file or root
// is an empty document.
func readIdentities(root string) (*identityDoc, error) {
	empty := &identityDoc{Version: identityVersion}
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return empty, nil
	}
	co, err := repo.Open(root)
	if err != nil {
		return nil, err
	}
	defer co.Close()
	data, err := co.ReadFile(IdentityFile, maxIdentityFile)
	if errors.Is(err, fs.ErrNotExist) {
		return empty, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeIdentities(data)
}

// decodeIdentities reads IdentityFile strictly: an unknown key, another
// version or a record without a credential is not one.
func decodeIdentities(data []byte) (*identityDoc, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d identityDoc
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("not an identity file: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not an identity file: more than one JSON value")
	}
	if d.Version != identityVersion {
		return nil, fmt.Errorf("got version %d, want %d", d.Version, identityVersion)
	}
	for i, r := range d.Identities {
		if r.Credential == "" {
			return nil, fmt.Errorf("identities[%d]: got no credential", i)
		}
	}
	return &d, nil
}

// writeIdentity puts rec first in IdentityFile under root, replacing the
// record of the same credential. A file that does not read is replaced:
// it only ever saves a question.
func writeIdentity(root string, rec identityRecord) error {
	// The state root is the operator's alone.
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	co, err := repo.Open(root)
	if err != nil {
		return err
	}
	defer co.Close()
	doc := &identityDoc{Version: identityVersion}
	if data, err := co.ReadFile(IdentityFile, maxIdentityFile); err == nil {
		if d, err := decodeIdentities(data); err == nil {
			doc = d
		}
	}
	rest := slices.DeleteFunc(doc.Identities, func(r identityRecord) bool { return r.Credential == rec.Credential })
	doc.Identities = append([]identityRecord{rec}, rest...)
	if len(doc.Identities) > maxIdentities {
		doc.Identities = doc.Identities[:maxIdentities]
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	return co.WriteFileWithin(IdentityFile, buf.Bytes(), 0o600, maxIdentityFile)
}

// digest is a short, one-way name for secret material.
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// discardLog is the logger of an integration given none.
var discardLog = slog.New(slog.DiscardHandler)
