package policy

import (
	"maps"
	"slices"

	"github.com/the-loop/the-loop/builtins"
)

// Channel names a person entry uses that this package reads itself.
const (
	// ChannelGitHub is the channel a bare-string entry names, and the
	// only one the GitHub-facing consumers (router, gates) read.
	ChannelGitHub = "github"
	// personNameKey is the one key of a person mapping that is not a
	// channel.
	personNameKey = "name"
)

// Person is one entry of routing.authorizedUsers: one human, and the id
// they have on each channel they act on. A bare string in the config is a
// person with only a GitHub login; a mapping gives every channel's id
// ({github: jc1993, slack: U0456GHIJKL, name: John}).
//
// Authorization is per channel, so that a chat id can never stand in for a
// GitHub login: a person with only a slack id authorizes nothing on
// GitHub. The zero Person names no id and authorizes nobody.
type Person struct {
	// IDs maps a channel name to the person's native id on it. Entries with
	// an empty id are never present.
	IDs map[string]string
	// Name is the optional label the config gives; it is never compared.
	Name string
}

// On is the person's id on channel, "" when they have none there.
func (p Person) On(channel string) string { return p.IDs[channel] }

// Label names the person in logs and messages: Name when set, else the
// GitHub login, else "channel:id" for the first channel in sorted order
// (sorted so that the label never depends on map order), else "(nobody)".
func (p Person) Label() string {
	if p.Name != "" {
		return p.Name
	}
	if id := p.On(ChannelGitHub); id != "" {
		return id
	}
	if chans := slices.Sorted(maps.Keys(p.IDs)); len(chans) > 0 {
		return chans[0] + ":" + p.IDs[chans[0]]
	}
	return "(nobody)"
}

// People is routing.authorizedUsers read as persons, one per entry and in
// config order, so that an index names the same entry in the file. An
// entry that is neither a string nor a mapping (only a hand-built Doc can
// hold one; the schema refuses it) is a Person naming no id. Values that
// are not non-empty strings are dropped from a mapping. The result is a
// fresh copy on every call.
func (c *CLIConfig) People() []Person {
	v, _ := lookup(c.Doc, "routing.authorizedUsers")
	entries, _ := v.([]any)
	out := make([]Person, 0, len(entries))
	for _, e := range entries {
		out = append(out, personOf(e))
	}
	return out
}

func personOf(entry any) Person {
	p := Person{IDs: map[string]string{}}
	switch e := entry.(type) {
	case string:
		if e != "" {
			p.IDs[ChannelGitHub] = e
		}
	case map[string]any:
		for k, v := range e {
			s, ok := v.(string)
			switch {
			case !ok:
			case k == personNameKey:
				p.Name = s
			case s != "":
				p.IDs[k] = s
			}
		}
	}
	return p
}

// AuthorizedOn is the ids of every person authorized on channel, in config
// order, each once. Empty means nobody may act on that channel. On
// ChannelGitHub, logins that differ only in case or a leading "@" count as
// one, as builtins.IsAuthorized compares them.
func (c *CLIConfig) AuthorizedOn(channel string) []string {
	var out []string
	for _, p := range c.People() {
		id := p.On(channel)
		if id == "" || slices.ContainsFunc(out, func(o string) bool { return sameID(channel, o, id) }) {
			continue
		}
		out = append(out, id)
	}
	return out
}

// PersonOn finds the person whose id on channel is id, the first in config
// order when the config names one twice. The person is resolved from the
// operator's config only: a message's claim to be someone is matched here
// by the id its channel vouches for, never taken from the message. An
// empty id never matches. The Person is a copy.
func (c *CLIConfig) PersonOn(channel, id string) (Person, bool) {
	if id == "" {
		return Person{}, false
	}
	for _, p := range c.People() {
		if mine := p.On(channel); mine != "" && sameID(channel, mine, id) {
			return p, true
		}
	}
	return Person{}, false
}

// sameID compares two ids on channel: exactly, except GitHub logins, which
// compare as the gates compare them (case-insensitively, without a leading
// "@"), so that who the router admits and whose reply a gate reads never
// disagree.
func sameID(channel, a, b string) bool {
	if channel == ChannelGitHub {
		return builtins.IsAuthorized(a, []string{b})
	}
	return a == b
}
