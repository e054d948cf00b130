#!/usr/bin/env bash
# Builds the stockbench image (deploy/Dockerfile): the static binary of this checkout in an
# image FROM scratch, tagged $STOCKBENCH_IMAGE (default stockbench/stockbench:local), and
# prints its name. Push it to your registry for a Kubernetes cluster (deploy/k8s).
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${STOCKBENCH_IMAGE:-stockbench/stockbench:local}
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
CGO_ENABLED=0 ${GO:-go} build -o "$ctx/stockbench" ./cmd/stockbench
cp deploy/Dockerfile "$ctx/Dockerfile"
if ! docker build -q -t "$tag" --label org.stockbench.image=stockbench "$ctx" >"$ctx/build.log" 2>&1; then
  cat "$ctx/build.log" >&2
  exit 1
fi
echo "stockbench-image: built $tag ($(du -h "$ctx/stockbench" | cut -f1) binary)" >&2
echo "$tag"
