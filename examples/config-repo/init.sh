#!/bin/sh
# Make a config repo in DIR from this example:
#   a first commit with the GitHub Actions callers (examples/github-workflows), which every
#   branch starts from: a push runs the workflows of the branch pushed to;
#   the control branch `main` with channels/, clusters.yaml and .gitignore;
#   the channel branches dev, alpha, beta and stable, all at one commit holding cluster/;
#   every group of every channel pinned to that commit, so each cluster has a version to run.
# Usage: examples/config-repo/init.sh DIR      (DIR must not exist yet; needs git >= 2.28)
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
example=$(cd "$(dirname "$0")" && pwd)
dir=$1
if [ -e "$dir" ]; then
    echo "$0: $dir exists already; give a new directory" >&2
    exit 1
fi
git init --quiet --initial-branch=main "$dir"
cd "$dir"
mkdir -p .github/workflows
cp "$example"/../github-workflows/*.yml .github/workflows/
git add .github
git commit --quiet -m "GitHub Actions: clmgit's reconcile, promote and preview callers"

# The configuration, on dev; the other channels start at the same commit.
git checkout --quiet -b dev
cp -R "$example/cluster" cluster
git add cluster
git commit --quiet -m "Cluster configuration, version 1"
sha=$(git rev-parse HEAD)
for channel in alpha beta stable; do
    git branch "$channel" "$sha"
done

# Pins and clusters, on the control branch.
git checkout --quiet main
mkdir channels
for file in "$example"/channels/*.yaml; do
    # After each group's `- name:` line, its pin, indented as the group's other keys.
    awk -v sha="$sha" '{ print }
        /^ *- name:/ { match($0, /^ */); print substr($0, 1, RLENGTH) "  sha: " sha }' \
        "$file" > "channels/$(basename "$file")"
done
cp "$example/clusters.yaml" "$example/.gitignore" .
git add channels clusters.yaml .gitignore
git commit --quiet -m "Channels and clusters"
echo "A config repo in $dir: main holds channels/ and clusters.yaml; dev, alpha, beta, stable hold cluster/ at ${sha}."
