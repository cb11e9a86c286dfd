# SPDX-License-Identifier: Apache-2.0
# names.txt parity: burtorch-makemore (e=64, 10,000 SGD steps of
# batch 32, lr 0.1) reaches a validation loss within 0.05 of the PyTorch
# reference trained with the same settings (tools/golden/nn/names_parity.py
# prints both). Only when ../shared/data/names.txt and python3-torch exist;
# otherwise skips (exit 0). About 90 s.
# suite: build
# after: 10-host
# jobs: 1
set -eu
cd "$(dirname "$0")/../.."
. tools/check.d/lib/nn-golden.sh
names=../shared/data/names.txt
if [ ! -f "$names" ]; then
  echo "skipped: $names not present"
  exit 0
fi
needs_torch
nn_golden_build burtorch-makemore
/usr/bin/python3 tools/golden/nn/names_parity.py "$build/targets/host/burtorch-makemore" "$names" 10000
