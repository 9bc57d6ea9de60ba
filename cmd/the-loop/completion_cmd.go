package main

import (
	"bytes"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/posener/complete"
	"github.com/willabides/kongplete"

	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// CompletionCmd is `the-loop completion`.
type CompletionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish."`
}

func (c *CompletionCmd) Help() string {
	return `The script registers the-loop as its own completer: the shell runs it with
the command line in $COMP_LINE, and it prints the words that may come next
(verbs, flags, --format and other choices, work item ids). Load it in the
current shell, or add the line to your shell's startup file:

  bash   source <(the-loop completion bash)          # ~/.bashrc
  zsh    source <(the-loop completion zsh)           # ~/.zshrc, after compinit
  fish   the-loop completion fish | source           # ~/.config/fish/config.fish

or, for fish, save it once as ~/.config/fish/completions/the-loop.fish.
Either way, the shell runs the the-loop it finds on your PATH.`
}

// completionScripts are what each shell needs to ask the-loop. bash and
// zsh (through its bash compatibility) run it as the completer and fall
// back to file names when it has nothing to say; fish calls it from a
// function that hands it the line up to the cursor.
var completionScripts = map[string]string{
	"bash": `# bash completion for the-loop; load it with: source <(the-loop completion bash)
complete -o default -C the-loop the-loop
`,
	"zsh": `# zsh completion for the-loop; load it with: source <(the-loop completion zsh)
(( ${+functions[compdef]} )) || { autoload -Uz compinit && compinit; }
(( ${+functions[complete]} )) || { autoload -Uz bashcompinit && bashcompinit; }
complete -o default -C the-loop the-loop
`,
	"fish": `# fish completion for the-loop; load it with: the-loop completion fish | source
function __the_loop_complete
    set -l token (commandline -ct)
    set -lx COMP_LINE (commandline -cp)
    if test -z "$token"
        # the line ends between words: say so, or the last word reads as unfinished
        set COMP_LINE "$COMP_LINE "
    end
    command the-loop
end
complete -c the-loop -f -a '(__the_loop_complete)'
`,
}

func (c *CompletionCmd) Run(out *Output) error {
	_, err := io.WriteString(out.Stdout, completionScripts[c.Shell])
	return err
}

// completing reports whether a shell has run the-loop to complete a line.
func completing() bool { return os.Getenv("COMP_LINE") != "" }

// answerCompletion answers the shell: the words that may follow the line in
// $COMP_LINE (up to $COMP_POINT), one a line, sorted.
func answerCompletion(parser *kong.Kong, stdout io.Writer) error {
	line := os.Getenv("COMP_LINE")
	if point, err := strconv.Atoi(os.Getenv("COMP_POINT")); err == nil && point >= 0 && point < len(line) {
		line = line[:point]
	}
	words := strings.Fields(line)
	items := func(complete.Args) []string {
		return predictItems(flagValue(words, "--repo"), flagValue(words, "--config"))
	}
	cmd, err := kongplete.Command(&kong.Kong{Model: &kong.Application{Node: inheriting(parser.Model.Node, nil)}},
		kongplete.WithPredictor("item", complete.PredictFunc(items)),
		kongplete.WithPredictor("loop", complete.PredictSet(graph.ShippedLoops...)),
	)
	if err != nil {
		return err
	}
	// The predictions come out of maps: sort them, so that the same line
	// gets the same answer.
	var buf bytes.Buffer
	c := complete.New(parser.Model.Name, cmd)
	c.Out = &buf
	c.Complete()
	if buf.Len() == 0 {
		return nil
	}
	answer := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	slices.Sort(answer)
	_, err = io.WriteString(stdout, strings.Join(slices.Compact(answer), "\n")+"\n")
	return err
}

// inheriting is a copy of node and its descendants in which each node
// also holds the flags of its ancestors, as kong accepts them: kongplete
// counts a command's positional arguments past its own flags only, and
// would read "graph status --repo DIR " as at the item's second argument.
func inheriting(node *kong.Node, ancestors []*kong.Flag) *kong.Node {
	c := *node
	c.Flags = append(slices.Clip(ancestors), node.Flags...)
	c.Children = make([]*kong.Node, len(node.Children))
	for i, child := range node.Children {
		c.Children[i] = inheriting(child, c.Flags)
	}
	return &c
}

// predictItems lists the work items of repository (as --repo names it;
// "" for the working directory's), its operator config read from config
// (--config). Whatever stops it (no repository, a broken config) is an
// empty list: a completion has no place to say an error.
func predictItems(repository, config string) []string {
	e, err := policy.Open(policy.Options{Repo: repository, CLIConfig: config, Events: eventlog.Discard})
	if err != nil {
		return nil
	}
	items, _ := e.Items()
	// A folder name that would act on a terminal, or split the answer's
	// lines, is no word to offer.
	return slices.DeleteFunc(items, func(id string) bool { return !clean(id, false) })
}

// flagValue is the last value words give flag, as --flag value or
// --flag=value; "" when they give none.
func flagValue(words []string, flag string) string {
	v := ""
	for i, w := range words {
		if after, ok := strings.CutPrefix(w, flag+"="); ok {
			v = after
		} else if w == flag && i+1 < len(words) {
			v = words[i+1]
		}
	}
	return v
}
