package builtins

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

func init() { register("publish-artifact", publishArtifact{}) }

// publishArtifact posts an artifact's content to the work item's thread. It
// matters only in a repository that never adopted the-loop: there the spec
// tree is kept out of git, the file exists only in the working checkout, and
// the thread is the only place a human can review it. In an initialized
// repository the committed file is the review surface and the hook skips.
// Each entry posts again on purpose, so a gate looped back shows the revised
// artifact.
//
// Params: artifact (string, a path relative to the spec folder).
// Data: posted (bool), artifact (string); error when reading or posting
// failed. A missing artifact (planned away, or not written yet) is a skip:
// validate-artifacts remains the gate. The file is read confined to the spec
// folder: a symbolic link leading out of it is refused, so nothing else on the
// machine can be published through one.
type publishArtifact struct{}

var (
	_ graph.Hook         = publishArtifact{}
	_ graph.ParamChecker = publishArtifact{}
)

const publishArtifactName = "publish-artifact"

var publishArtifactRules = withRules{"artifact": withString}

func (publishArtifact) CheckParams(params map[string]any) error {
	if err := publishArtifactRules.verify(publishArtifactName, params); err != nil {
		return err
	}
	if a := obParamString(params, "artifact"); a != "" && !filepath.IsLocal(a) {
		return fmt.Errorf("with.artifact: got %q, want a path inside the spec folder", a)
	}
	return nil
}

func (publishArtifact) Run(ctx *graph.Context) (graph.Result, error) {
	const name = publishArtifactName
	if ctx.Settings.RepoInitialized {
		return graph.Skip(name, "the repository carries the artifact; it is reviewable there"), nil
	}
	artifact := obParamString(ctx.Params, "artifact")
	if artifact == "" {
		return graph.Skip(name, "no artifact named"), nil
	}
	if !filepath.IsLocal(artifact) {
		return graph.Result{}, fmt.Errorf("with.artifact: %q is not a path inside the spec folder", artifact)
	}
	if ctx.ReadOnly {
		return graph.Skip(name, readOnlyReason), nil
	}
	failed := map[string]any{"posted": false, "artifact": artifact}
	content, err := publishReadArtifact(ctx, artifact)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return graph.Skip(name, fmt.Sprintf("no %s for this work item", artifact)), nil
	case err != nil:
		obWarn(ctx, "could not read the artifact", "artifact", artifact, "error", err)
		return degradedWith(name, err, failed), nil
	}
	body := markSelfAuthored(fmt.Sprintf(
		"🤖 _the-loop_ — **`%s`** for `%s`.\n\n"+
			"This repository has not adopted the-loop, so the artifact is working state kept out of git, and this comment is where it is reviewed.\n\n---\n\n%s",
		artifact, ctx.WorkItem.ID, content))
	if _, err := callOut(ctx, opAddComment, map[string]any{"ref": ctx.WorkItem.Ref, "body": body}); err != nil {
		obWarn(ctx, "could not publish the artifact", "artifact", artifact, "error", err)
		return degradedWith(name, err, failed), nil
	}
	return graph.Pass(name, map[string]any{"posted": true, "artifact": artifact}), nil
}

// publishReadArtifact reads the artifact name in the work item's folder,
// through the checkout's confinement. A name that is not a regular file
// reads as not existing.
func publishReadArtifact(ctx *graph.Context, name string) ([]byte, error) {
	data, err := ctx.Files.ReadFile(path.Join(ctx.WorkItem.Dir, filepath.ToSlash(name)))
	if errors.Is(err, repo.ErrNotRegular) {
		// Departure from the original (docs/compatibility.md#a-link-out-of-the-spec-folder-is-not-followed-by-log-entry-or-publish-artifact): a link out of the spec folder is not followed.
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	return data, err
}
