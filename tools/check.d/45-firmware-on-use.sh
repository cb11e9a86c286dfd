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
# what it measured when set plus a little: 10,788 B on the Cortex-M4 and
# 15,224 B on the Cortex-M0 (the goals, 10 KiB and 14 KiB, are not met: the
# library's own float tanh and the uniform inits of constexpr options took
# it to 9,980 and 14,384 B, then the refusals that rewind a layer's or a
# loss's part-way recording (nn::all_or_nothing, Tape::rewind) added about
# 840 B). The same for tiny_xor_firmware_defaults, the same trainer
# written as the docs teach (create(tape, options, rng), format_double):
# ceilings 11,200 B on the Cortex-M4 and 15,650 B on the Cortex-M0
# (11,188 B and 15,616 B when set; the goals are the same 10 KiB and 14 KiB). Neither may link tanhf, expm1f
# or the Init code the default (uniform) init does not use
# (narrow_to_float, portable_logf, normal_float, draw_float).
# Then no soft-double in any FP32 firmware: the getting-started firmware
# (examples/firmware-start, written as the docs teach: create(tape,
# options, rng), format_double; on the micro:bit with its 16 KiB as RAM
# budget) and the 16-32-4 peer trainers of bench/mcu/peer (the project's
# and mlp_peer_defaults, the same written as the docs teach) built from
# the install on every preset, examples/xor_firmware on the Cortex-M4, and
# every firmware the Cortex-M stages build in the presets' trees, found in
# each tree's list of targets (not listed here: a new one is checked
# without being named): the training firmware and the footprint probe of
# targets/firmware, the getting-started firmware the test suites build.
# A link map with __aeabi_d* or __*df3 fails the stage, but for the
# firmware exempt below, each with why: those of a double precision (the
# test suites, which run every op on a Tape<double> too; the custom-op
# example, a Tape<double> model; stage 61's instruction-count benches,
# which the Cortex-M stages do not build and which compute their
# statistics in double) and the fine-tuning firmware's picture generator.
# Prints each one's flash. On the presets'
# installs (build/prefix/, made by stages 22-26): ~30 s per preset (on
# its own, configuring and building the presets' firmware as well: ~3 min).
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

# preset:board:flash ceiling of tiny_xor_firmware:of tiny_xor_firmware_defaults (B)
for target in cortex-m0:microbit:15250:15650 cortex-m4:mps2-an386:10800:11200 cortex-m7:mps2-an500:0:0 \
              cortex-m33:mps2-an505:0:0 cortex-m55:mps3-an547:0:0; do
  IFS=: read -r cpu board ceiling defaults_ceiling <<< "$target"
  prefix=$(preset_prefix "$cpu") || fail "$cpu: no install"
  b="$work/xor-$cpu"
  rm -rf "$b"
  cmake -S "$root/examples/tiny_xor_firmware" -B "$b" -DCMAKE_TOOLCHAIN_FILE="$prefix/share/burtorch/toolchains/$cpu.cmake" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=MinSizeRel > "$b.log" 2>&1 || { cat "$b.log"; fail "$cpu: does not configure"; }
  cmake --build "$b" >> "$b.log" 2>&1 || { cat "$b.log"; fail "$cpu: does not build"; }
  for exe in tiny_xor_firmware tiny_xor_firmware_defaults; do
    elf="$b/$exe.elf"
    # Functions defined in the linked image.
    bad=$(arm-none-eabi-nm "$elf" | awk '$2 ~ /^[TtWw]$/ {print $3}' |
          grep -E '^(logf|expf|log1pf|exp|log|log1p|tanh|expm1|pow|powf|__aeabi_d[a-z0-9]+|__[a-z]+df[0-9]?)$' || true)
    [ -z "$bad" ] || fail "$cpu: $exe links code it never uses: $(echo $bad)"
    # tanh is the library's own (no tanhf, expm1f); the defaults' constexpr
    # options with uniform inits link no other Init kind's code.
    bad=$(arm-none-eabi-nm -C "$elf" | awk '$2 ~ /^[TtWw]$/' |
          grep -E ' (tanhf|expm1f|burtorch::nn::(narrow_to_float|portable_logf|Rng::normal_float|draw_float))\b' || true)
    [ -z "$bad" ] || fail "$cpu: $exe links code it never uses: $(echo $bad)"
    out="$b/$exe.out"
    "$root/tools/qemu-run" --machine "$board" --timeout 120 "$elf" > "$out" 2>/dev/null ||
      { cat "$out"; fail "$cpu: $exe did not train (exit code non-zero)"; }
    read -r text data <<< "$(arm-none-eabi-size "$elf" | awk 'NR == 2 {print $1, $2}')"
    flash=$((text + data))
    tape=$(python3 -c "print(int('$(arm-none-eabi-nm -S "$elf" | awk '$4 ~ /g_tape/ {print $2}')', 16))")
    echo "  $cpu: $exe flash $flash B, tape RAM $tape B, $(grep '^final loss' "$out"); no libm or soft-double code it does not use"
    [ "$tape" -le 1024 ] || fail "$cpu: $exe: the tape takes $tape B of RAM (more than 1 KiB)"
    limit=$ceiling
    [ "$exe" = tiny_xor_firmware ] || limit=$defaults_ceiling
    if [ "$limit" -gt 0 ] && [ "$flash" -gt "$limit" ]; then
      fail "$cpu: $exe flash $flash B, more than $limit B"
    fi
  done
done
# No soft-double code in an FP32 firmware: the functions defined in its image.
soft_double() {  # soft_double ELF: prints the soft-double functions linked
  arm-none-eabi-nm "$1" | awk '$2 ~ /^[TtWw]$/ {print $3}' | grep -E '^(__aeabi_d[a-z0-9]+|__[a-z]+df[0-9]?)$' | tr '\n' ' ' || true
}
flash_of() { arm-none-eabi-size "$1" | awk 'NR == 2 {print $1 + $2}'; }
# The fine-tuning firmware draw their pictures with data/shapes_data.hpp,
# the generator burtorch-cnn and its PyTorch parity (stage 19) share, which
# computes in double so that both see the same pixels: soft-double code
# the firmware's data brings, not the model. Listed, so that any other
# firmware with soft-double code fails, and so does one of these without.
known_double="cortex-m0/burtorch-finetune cortex-m4/burtorch-finetune cortex-m4/burtorch-fleet-device \
cortex-m55/burtorch-finetune cortex-m55/burtorch-finetune-lanes"
# The firmware of a configured tree: every target of its list but the
# library's own (the archives, the board's objects, the test harness),
# CMake's, and those of a double precision (the test suites and
# port_death_*, example_custom_op) or not built by the Cortex-M stages
# (*-icount: stage 61's benches; burtorch-peer-*, burtorch-xor-*:
# tools/compiled-step-numbers' benches; all EXCLUDE_FROM_ALL, and the
# 16-32-4 peers' data do not fit the micro:bit's RAM).
firmware_of() {  # firmware_of TREE
  cmake --build "$1" --target help | sed -n 's/^\.\.\. //p' | awk '{print $1}' | grep -E '^[A-Za-z0-9_-]+$' |
    grep -vE '^(all|clean|depend|edit_cache|install|list_install_components|rebuild_cache|test|package|package_source)$' |
    grep -vE '^(burtorch|burtorch_[a-z_]+|test_[a-z0-9_]+|port_death_[a-z_]+|example_custom_op|burtorch-icount|burtorch-[a-z]+-icount)$' |
    grep -vE '^(burtorch-peer-[a-z-]+|burtorch-xor-[a-z]+)$' |
    sort || true
}
for target in cortex-m0:microbit cortex-m4:mps2-an386 cortex-m7:mps2-an500 cortex-m33:mps2-an505 cortex-m55:mps3-an547; do
  IFS=: read -r cpu board <<< "$target"
  prefix=$(preset_prefix "$cpu") || fail "$cpu: no install"
  line="  $cpu:"
  # The getting-started firmware; on the micro:bit with its RAM as budget.
  src="$work/start-src-$cpu"
  rm -rf "$src"
  cp -r "$root/examples/firmware-start" "$src"
  [ "$cpu" != cortex-m0 ] || sed -i 's/RAM_BUDGET 24576/RAM_BUDGET 16384/' "$src/CMakeLists.txt"
  projects="$src:start $root/bench/mcu/peer:mlp_peer_library,mlp_peer_defaults"
  # examples/xor_firmware is a Cortex-M4 example (docs/targets.md).
  [ "$cpu" != cortex-m4 ] || projects="$projects $root/examples/xor_firmware:xor_firmware"
  for project in $projects; do
    dir=${project%%:*}
    b="$work/$(basename "$dir")-$cpu"
    rm -rf "$b"
    cmake -S "$dir" -B "$b" -DCMAKE_TOOLCHAIN_FILE="$prefix/share/burtorch/toolchains/$cpu.cmake" \
          -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=MinSizeRel > "$b.log" 2>&1 || { cat "$b.log"; fail "$cpu: $dir does not configure"; }
    for exe in $(echo "${project##*:}" | tr ',' ' '); do
      # The peer trainers do not fit the micro:bit's RAM (their data set is 4 KiB).
      [ "$cpu" != cortex-m0 ] || [ "$exe" = start ] || continue
      cmake --build "$b" --target "$exe" >> "$b.log" 2>&1 || { cat "$b.log"; fail "$cpu: $exe does not build"; }
      bad=$(soft_double "$b/$exe.elf")
      [ -z "$bad" ] || fail "$cpu: $exe links soft-double code: $bad"
      line="$line $exe $(flash_of "$b/$exe.elf") B,"
    done
  done
  # The preset's own FP32 firmware: its trainers and the footprint probe
  # (built by its stage: a no-op then).
  # Run alone, without the preset's tree, in a tree of this stage's own (a
  # partly built build/PRESET would be taken for the preset's install).
  tree="$root/build/$cpu"
  if [ ! -f "$tree/CMakeCache.txt" ]; then
    tree="$work/tree-$cpu"
    [ -f "$tree/CMakeCache.txt" ] || (cd "$root" && cmake --preset "$cpu" -B "$tree") > "$work/trees-$cpu.log" 2>&1 ||
      { cat "$work/trees-$cpu.log"; fail "$cpu: the preset does not configure"; }
  fi
  trees=$(firmware_of "$tree")
  [ -n "$trees" ] || fail "$cpu: no firmware target in $tree"
  # shellcheck disable=SC2086
  cmake --build "$tree" -j2 --target $trees >> "$work/trees-$cpu.log" 2>&1 ||
    { cat "$work/trees-$cpu.log"; fail "$cpu: the training firmware does not build"; }
  for exe in $trees; do
    elf=$(find "$tree" -name "$exe.elf" -type f -print -quit)
    [ -n "$elf" ] || fail "$cpu: no $exe.elf in $tree"
    bad=$(soft_double "$elf")
    case " $known_double " in
      *" $cpu/$exe "*)
        [ -n "$bad" ] || fail "$cpu: $exe links no soft-double code now: take it off known_double"
        line="$line $exe $(flash_of "$elf") B (soft-double: its picture generator),";;
      *)
        [ -z "$bad" ] || fail "$cpu: $exe links soft-double code: $bad"
        line="$line $exe $(flash_of "$elf") B,";;
    esac
  done
  echo "${line%,}; no other soft-double code"
done
echo "45-firmware-on-use: no FP32 firmware links soft-double code (the fine-tuning firmware's picture generator excepted)"
echo "45-firmware-on-use: the XOR trainer links only what it uses on every Cortex-M preset"
