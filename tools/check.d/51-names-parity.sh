# SPDX-License-Identifier: Apache-2.0
# names.txt parity: burtorch-makemore (e=64, 10,000 SGD steps of
# batch 32, lr 0.1) reaches a validation loss within 0.05 of the PyTorch
# reference trained with the same settings (tools/golden/nn/names_parity.py
# prints both). Only when ../shared/data/names.txt and python3-torch exist;
# otherwise skips (exit 0). About 90 s.
set -eu
cd "$(dirname "$0")/../.."
names=../shared/data/names.txt
if [ ! -f "$names" ]; then
  echo "skipped: $names not present"
  exit 0
fi
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "skipped: PyTorch (python3-torch) is not installed"
  exit 0
fi
build=build/nn-golden
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBURTORCH_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j2 --target burtorch-makemore
/usr/bin/python3 tools/golden/nn/names_parity.py "$build/targets/host/burtorch-makemore" "$names" 10000
