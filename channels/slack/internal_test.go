package slack

import (
	"net/http"
	"testing"
	"time"
)

func TestNewClientDefaultsItsTimeout(t *testing.T) {
	if c := NewClient(DefaultAPIBaseURL, "t", nil); c.hc.Timeout != DefaultTimeout {
		t.Errorf("timeout %s, want %s", c.hc.Timeout, DefaultTimeout)
	}
	if c := NewClient(DefaultAPIBaseURL, "t", &http.Client{Timeout: time.Second}); c.hc.Timeout != time.Second {
		t.Errorf("timeout %s, want the caller's", c.hc.Timeout)
	}
}
