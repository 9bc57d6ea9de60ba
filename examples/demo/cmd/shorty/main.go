// Command shorty serves short links: POST /links creates one, GET /{code}
// redirects to its target.
package main

import (
	"log"
	"net/http"
	"os"

	"github.com/acme/shorty/internal/links"
)

func main() {
	store := links.NewMemoryStore()
	mux := http.NewServeMux()
	mux.Handle("POST /links", links.CreateHandler(store))
	mux.Handle("GET /{code}", links.RedirectHandler(store))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	addr := os.Getenv("SHORTY_ADDR")
	if addr == "" {
		addr = ":8080"
	}
	log.Fatal(http.ListenAndServe(addr, mux))
}
