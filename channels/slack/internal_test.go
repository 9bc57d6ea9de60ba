package slack

import (
	"net/http"
	"testing"
	"time"
)

func TestSamplerSaysHowManyWentUnsaid(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := newSampler(2)
	s.now = func() time.Time { return now }
	var got []int
	for range 5 {
		if unsaid, ok := s.allow(); ok {
			got = append(got, unsaid)
		}
	}
	now = now.Add(time.Second)
	if unsaid, ok := s.allow(); ok {
		got = append(got, unsaid)
	}
	if want := []int{0, 0, 3}; len(got) != len(want) || got[0] != 0 || got[1] != 0 || got[2] != 3 {
		t.Errorf("allowed with unsaid %v, want %v", got, want)
	}
}

func TestNewClientDefaultsItsTimeout(t *testing.T) {
	if c := NewClient(DefaultAPIBaseURL, "t", nil); c.hc.Timeout != DefaultTimeout {
		t.Errorf("timeout %s, want %s", c.hc.Timeout, DefaultTimeout)
	}
	if c := NewClient(DefaultAPIBaseURL, "t", &http.Client{Timeout: time.Second}); c.hc.Timeout != time.Second {
		t.Errorf("timeout %s, want the caller's", c.hc.Timeout)
	}
}
