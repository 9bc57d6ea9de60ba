// Package links stores short links and serves the create and redirect
// endpoints.
package links

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sync"
)

// ErrNotFound is returned for a code no link has.
var ErrNotFound = errors.New("links: no such code")

// Store keeps links by code.
type Store interface {
	Put(code, target string) error
	Get(code string) (string, error)
}

// MemoryStore is a Store in memory; safe for concurrent use.
type MemoryStore struct {
	mu    sync.RWMutex
	links map[string]string
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{links: map[string]string{}} }

// Put stores target under code.
func (s *MemoryStore) Put(code, target string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.links[code] = target
	return nil
}

// Get returns code's target, or ErrNotFound.
func (s *MemoryStore) Get(code string) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.links[code]
	if !ok {
		return "", ErrNotFound
	}
	return t, nil
}

const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"

// newCode is seven characters from an alphabet without look-alikes.
func newCode() string {
	b := make([]byte, 7)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// CreateHandler accepts {"target": "https://..."} and answers {"code": "..."}.
func CreateHandler(s Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Target string `json:"target"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
			http.Error(w, "want a JSON body with a target", http.StatusBadRequest)
			return
		}
		u, err := url.Parse(req.Target)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			http.Error(w, "target must be an absolute http(s) URL", http.StatusBadRequest)
			return
		}
		code := newCode()
		if err := s.Put(code, u.String()); err != nil {
			http.Error(w, "could not store the link", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"code": code})
	})
}

// RedirectHandler answers GET /{code} with a 302 to the stored target.
func RedirectHandler(s Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target, err := s.Get(r.PathValue("code"))
		if errors.Is(err, ErrNotFound) {
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, "lookup failed", http.StatusInternalServerError)
			return
		}
		http.Redirect(w, r, target, http.StatusFound)
	})
}
