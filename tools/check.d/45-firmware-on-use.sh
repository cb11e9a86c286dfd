# SPDX-License-Identifier: Apache-2.0
# A firmware links only what it uses: examples/tiny_xor_firmware (a 2-4-1
# tanh MLP learning XOR, MSE, SGD, the loss printed with format_float),
# built out of tree at MinSizeRel against each Cortex-M preset's installed
# package (as the preset builds it: parameter names compiled out on the M4
# and M7) with the package's toolchain file, as docs/porting.md says. Fails
# if its link map has any libm function the program never records an op
# of (logf, expf, log1pf, the double-precision ones) or soft-double
# arithmetic (__aeabi_d*, __*df3), or if the firmware does not train under
# QEMU (exit code 0: final loss below 0.01). Prints flash (text + data)
# and the tape's RAM (the FixedTape object: tape, parameters, gradients;
# SGD keeps no state), and fails past the ceilings below: RAM 1 KiB; flash
# what it measured when they were set plus a little (Cortex-M4 10,488 B,
# Cortex-M0 15,132 B; then 10,712 B and 15,396 B with the checks that
# refuse a layer wider than the tape's parameter region and an input of
# another width before anything is recorded, about 160 B of text; the
# goals, 10 KiB and 14 KiB, are not met yet). On
# the presets' installs (build/prefix/, made by stages 22-26): ~10 s per
# preset.
# suite: compliance
# jobs: 1
# after: 22-cortex-m0 23-cortex-m4 24-cortex-m7 25-cortex-m33 26-cortex-m55
# trees: firmware-on-use
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work="$root/build/firmware-on-use"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
. "$root/tools/check.d/lib/trees.sh"

# preset:board:flash ceiling (B)
for target in cortex-m0:microbit:15450 cortex-m4:mps2-an386:10760 cortex-m7:mps2-an500:0 \
              cortex-m33:mps2-an505:0 cortex-m55:mps3-an547:0; do
  IFS=: read -r cpu board ceiling <<< "$target"
  prefix=$(preset_prefix "$cpu") || fail "$cpu: no install"
  b="$work/xor-$cpu"
  rm -rf "$b"
  cmake -S "$root/examples/tiny_xor_firmware" -B "$b" -DCMAKE_TOOLCHAIN_FILE="$prefix/share/burtorch/toolchains/$cpu.cmake" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=MinSizeRel > "$b.log" 2>&1 || { cat "$b.log"; fail "$cpu: does not configure"; }
  cmake --build "$b" >> "$b.log" 2>&1 || { cat "$b.log"; fail "$cpu: does not build"; }
  elf="$b/tiny_xor_firmware.elf"
  # Functions defined in the linked image.
  bad=$(arm-none-eabi-nm "$elf" | awk '$2 ~ /^[TtWw]$/ {print $3}' |
        grep -E '^(logf|expf|log1pf|exp|log|log1p|tanh|expm1|pow|powf|__aeabi_d[a-z0-9]+|__[a-z]+df[0-9]?)$' || true)
  [ -z "$bad" ] || fail "$cpu: links code it never uses: $(echo $bad)"
  out="$b.out"
  "$root/tools/qemu-run" --machine "$board" --timeout 120 "$elf" > "$out" 2>/dev/null ||
    { cat "$out"; fail "$cpu: the firmware did not train (exit code non-zero)"; }
  read -r text data <<< "$(arm-none-eabi-size "$elf" | awk 'NR == 2 {print $1, $2}')"
  flash=$((text + data))
  tape=$(python3 -c "print(int('$(arm-none-eabi-nm -S "$elf" | awk '$4 ~ /g_tape/ {print $2}')', 16))")
  echo "  $cpu: flash $flash B, tape RAM $tape B, $(grep '^final loss' "$out"); no libm or soft-double code it does not use"
  [ "$tape" -le 1024 ] || fail "$cpu: the tape takes $tape B of RAM (more than 1 KiB)"
  if [ "$ceiling" -gt 0 ] && [ "$flash" -gt "$ceiling" ]; then
    fail "$cpu: flash $flash B, more than $ceiling B"
  fi
done
echo "45-firmware-on-use: the XOR trainer links only what it uses on every Cortex-M preset"
