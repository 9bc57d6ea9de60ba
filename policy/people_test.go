package policy

import (
	"reflect"
	"slices"
	"testing"
)

// cliFrom loads a CLI config written as YAML, through the schema.
func cliFrom(t *testing.T, body string) *CLIConfig {
	t.Helper()
	cliEnv(t)
	c, err := LoadCLIConfig(writeCLI(t, t.TempDir(), body))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const mixedPeople = `routing:
  authorizedUsers:
    - octocat
    - github: jc1993
      slack: U0456GHIJKL
      name: John
    - slack: U0999ONLYSL
    - name: Nobody
    - "@OctoCat"
    - github: hubot
      matrix: "@hubot:example.org"
`

func TestPeopleReadsEachEntryAsOnePersonInConfigOrder(t *testing.T) {
	got := cliFrom(t, mixedPeople).People()
	want := []Person{
		{IDs: map[string]string{"github": "octocat"}},
		{IDs: map[string]string{"github": "jc1993", "slack": "U0456GHIJKL"}, Name: "John"},
		{IDs: map[string]string{"slack": "U0999ONLYSL"}},
		{IDs: map[string]string{}, Name: "Nobody"},
		{IDs: map[string]string{"github": "@OctoCat"}},
		{IDs: map[string]string{"github": "hubot", "matrix": "@hubot:example.org"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("People =\n%v\nwant\n%v", got, want)
	}
}

func TestPeopleAreCopies(t *testing.T) {
	c := cliFrom(t, mixedPeople)
	c.People()[1].IDs["github"] = "mallory"
	if got := c.People()[1].On("github"); got != "jc1993" {
		t.Errorf("changing a returned Person changed the config: github id %q", got)
	}
	p, _ := c.PersonOn("slack", "U0456GHIJKL")
	p.IDs["slack"] = "U0MALLORY"
	if _, ok := c.PersonOn("slack", "U0MALLORY"); ok {
		t.Error("changing the Person PersonOn returned changed the config")
	}
}

func TestAuthorizedOnListsOneChannelsIDs(t *testing.T) {
	c := cliFrom(t, mixedPeople)
	tests := []struct {
		channel string
		want    []string
	}{
		{"github", []string{"octocat", "jc1993", "hubot"}}, // "@OctoCat" is octocat again
		{"slack", []string{"U0456GHIJKL", "U0999ONLYSL"}},
		{"matrix", []string{"@hubot:example.org"}},
		{"email", nil},
		{"name", nil}, // the label is not a channel
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.channel, func(t *testing.T) {
			if got := c.AuthorizedOn(tt.channel); !slices.Equal(got, tt.want) {
				t.Errorf("AuthorizedOn(%q) = %q, want %q", tt.channel, got, tt.want)
			}
		})
	}
	if got, want := c.AuthorizedUsers(), c.AuthorizedOn(ChannelGitHub); !slices.Equal(got, want) {
		t.Errorf("AuthorizedUsers = %q, want the github ids %q", got, want)
	}
}

func TestASlackOnlyPersonAuthorizesNothingOnGitHub(t *testing.T) {
	c := cliFrom(t, "routing:\n  authorizedUsers:\n    - {slack: U0456GHIJKL, name: John}\n")
	if got := c.AuthorizedUsers(); len(got) != 0 {
		t.Errorf("AuthorizedUsers = %q; a person with only a slack id must authorize nobody on GitHub", got)
	}
	if _, ok := c.PersonOn("github", "John"); ok {
		t.Error("the person's name matched as a GitHub login")
	}
	if got := c.AuthorizedOn("slack"); !slices.Equal(got, []string{"U0456GHIJKL"}) {
		t.Errorf("AuthorizedOn(slack) = %q", got)
	}
}

func TestAnEmptyListAuthorizesNobodyOnAnyChannel(t *testing.T) {
	for name, body := range map[string]string{
		"empty list":         "routing: {authorizedUsers: []}\n",
		"absent":             "routing: {}\n",
		"only a name":        "routing: {authorizedUsers: [{name: John}]}\n",
		"an empty bare name": "routing: {authorizedUsers: ['']}\n",
	} {
		t.Run(name, func(t *testing.T) {
			c := cliFrom(t, body)
			for _, ch := range []string{"github", "slack"} {
				if got := c.AuthorizedOn(ch); len(got) != 0 {
					t.Errorf("AuthorizedOn(%s) = %q", ch, got)
				}
				if p, ok := c.PersonOn(ch, "John"); ok {
					t.Errorf("PersonOn(%s, John) = %v", ch, p)
				}
			}
		})
	}
}

func TestPersonOnMatchesExactlyPerChannel(t *testing.T) {
	c := cliFrom(t, mixedPeople)
	tests := []struct {
		name, channel, id string
		wantLabel         string // "" means no match
	}{
		{"a github login", "github", "jc1993", "John"},
		{"github logins ignore case and a leading @", "github", "@JC1993", "John"},
		{"a bare string is a github login", "github", "octocat", "octocat"},
		{"a slack id", "slack", "U0456GHIJKL", "John"},
		{"slack ids are exact", "slack", "u0456ghijkl", ""},
		{"slack ids take no @", "slack", "@U0456GHIJKL", ""},
		{"an id on another channel does not match", "slack", "jc1993", ""},
		{"a slack-only person", "slack", "U0999ONLYSL", "slack:U0999ONLYSL"},
		{"the empty id never matches", "slack", "", ""},
		{"the empty github login never matches", "github", "", ""},
		{"a bare @ never matches", "github", "@", ""},
		{"the name is not a channel", "name", "John", ""},
		{"an unknown channel", "email", "john@example.org", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := c.PersonOn(tt.channel, tt.id)
			if ok != (tt.wantLabel != "") || (ok && p.Label() != tt.wantLabel) {
				t.Errorf("PersonOn(%q, %q) = %v, %v; want %q", tt.channel, tt.id, p.Label(), ok, tt.wantLabel)
			}
		})
	}
}

func TestPersonOnTakesTheFirstEntryNamingTheID(t *testing.T) {
	c := cliFrom(t, "routing:\n  authorizedUsers:\n    - {github: jc1993, name: First}\n    - {github: JC1993, slack: U1, name: Second}\n")
	if p, _ := c.PersonOn("github", "jc1993"); p.Name != "First" {
		t.Errorf("PersonOn = %v, want the first entry", p)
	}
	if got := c.AuthorizedUsers(); !slices.Equal(got, []string{"jc1993"}) {
		t.Errorf("AuthorizedUsers = %q, want the login once", got)
	}
}

func TestPersonLabelIsDeterministic(t *testing.T) {
	tests := []struct {
		name string
		p    Person
		want string
	}{
		{"the name first", Person{IDs: map[string]string{"github": "jc1993"}, Name: "John"}, "John"},
		{"then the github login", Person{IDs: map[string]string{"slack": "U1", "github": "jc1993"}}, "jc1993"},
		{"then the first channel by name", Person{IDs: map[string]string{"zulip": "z", "slack": "U1", "matrix": "m"}}, "matrix:m"},
		{"nobody", Person{IDs: map[string]string{}}, "(nobody)"},
		{"the zero person", Person{}, "(nobody)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 20 { // map order varies from run to run; the label must not
				if got := tt.p.Label(); got != tt.want {
					t.Fatalf("Label = %q, want %q", got, tt.want)
				}
			}
		})
	}
	if got := (Person{}).On("github"); got != "" {
		t.Errorf("the zero Person is on github as %q", got)
	}
}

func TestPeopleToleratesAHandBuiltDoc(t *testing.T) {
	c := DefaultCLIConfig()
	c.Doc = map[string]any{"routing": map[string]any{"authorizedUsers": []any{
		3, nil, []any{"x"}, map[string]any{"github": 7, "slack": "", "name": 1, "matrix": "m"}, "octocat",
	}}}
	got := c.People()
	if len(got) != 5 {
		t.Fatalf("People = %v, want one per entry", got)
	}
	for i := range 3 {
		if got[i].Label() != "(nobody)" {
			t.Errorf("entry %d = %v, want nobody", i, got[i])
		}
	}
	if !reflect.DeepEqual(got[3], Person{IDs: map[string]string{"matrix": "m"}}) {
		t.Errorf("entry 3 = %#v", got[3])
	}
	if got := c.AuthorizedUsers(); !slices.Equal(got, []string{"octocat"}) {
		t.Errorf("AuthorizedUsers = %q", got)
	}
	c.Doc = map[string]any{"routing": map[string]any{"authorizedUsers": "octocat"}}
	if got := c.People(); len(got) != 0 {
		t.Errorf("a list that is not a list read as %v", got)
	}
}
