package mcpserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where `the-loop serve` answers MCP, over streamable HTTP.
const Path = "/mcp"

// MaxHTTPBody bounds one request's body on the HTTP transport: a tool
// call's arguments are a few hundred bytes.
const MaxHTTPBody = 1 << 20

// ErrNoToken is the error of an HTTP server built without a token.
var ErrNoToken = errors.New("no bearer token: the MCP endpoint is served only behind one")

// HTTPHandler is the server over streamable HTTP, stateless, behind a
// bearer token: a request without "Authorization: Bearer <token>" is
// answered 401 before the MCP layer reads it. The token is compared in
// constant time. An empty token is ErrNoToken: the endpoint is never
// served open.
func HTTPHandler(cfg Config, token string) (http.Handler, error) {
	if token == "" {
		return nil, ErrNoToken
	}
	srv := New(cfg)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: cfg.Log})
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		// Hashed first, so that the comparison takes as long whatever the
		// length of what was sent.
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="the-loop"`)
			http.Error(w, "a bearer token is required", http.StatusUnauthorized)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxHTTPBody)
		h.ServeHTTP(w, r)
	}), nil
}
