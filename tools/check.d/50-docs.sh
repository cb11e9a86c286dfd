#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Documentation: the numbers in README and docs/ are generated or checked,
# the API reference builds, the pictures are current, and each kind of
# install is consumed by one recipe. Four parts, each a script of
# tools/check.d/lib/ with its own header:
#   docs-numbers.sh  tools/docs-numbers: no document has more hand-written
#                    numbers than tools/docs-numbers.txt allows, every
#                    "stage NN" exists, checked blocks say what their
#                    checker computes; the counter can fail;
#   docs-api.sh      Doxygen over the public headers, warnings as errors,
#                    and the headers of docs/api/complete.txt fully
#                    documented (build/api-docs/html);
#   docs-pictures.sh the README's graph and the plots drawn in C++ (the
#                    demo's DOT export, burtorch-makemore's loss curve,
#                    tools/bench's plots of a made-up results file);
#   docs-recipes.sh  one consumption recipe per kind of install (host,
#                    Cortex-M, Linux cross, Make), the same in every
#                    document and in the stages that build it.
# ~40 s after 13-demo.
# suite: docs
# after: 13-demo
# jobs: 1
# trees: demo api-docs pictures
set -u
cd "$(dirname "$0")/../.."
status=0
for part in docs-numbers docs-api docs-pictures docs-recipes; do
  echo "== $part (tools/check.d/lib/$part.sh)"
  if bash "tools/check.d/lib/$part.sh"; then
    echo "== $part: ok"
  else
    echo "== $part: FAILED"
    status=1
  fi
done
exit "$status"
