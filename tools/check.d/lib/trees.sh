# SPDX-License-Identifier: Apache-2.0
# Sourced by the stages that share the presets' builds: each preset is built
# once, in build/PRESET, by its stage (10-host, 20-26), and installed once,
# into build/prefix/PRESET, at that stage's end; a later stage builds
# targets of a tree that are already built (a no-op) and reads the install,
# and never configures a tree again (two stages may read one at once).
#   preset_targets PRESET TARGET...
#                           build TARGETs in build/PRESET, configuring the
#                           tree first only if it has never been (a stage
#                           run alone)
#   install_preset PRESET   install build/PRESET's libraries into
#                           build/prefix/PRESET (the preset's stage calls it)
#   preset_prefix PRESET    print build/prefix/PRESET, installing it first
#                           when it is missing or older than the tree's
#                           archive (a stage run alone); without the
#                           preset's tree, from a tree of the preset with
#                           the libraries only (build/lib-PRESET)
#   preset_flags PRESET     print the flags a preset is configured with
#                           beyond the preset: aarch64-linux's MPI
#                           (-DBURTORCH_MPI_SYSROOT, once tools/mpi-sysroot
#                           has made build/mpi-sysroot-arm64; stage 20)
_prefix_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
preset_flags() {  # preset_flags PRESET
  if [ "$1" = aarch64-linux ] && [ -f "$_prefix_root/build/mpi-sysroot-arm64/.packages" ]; then
    echo "-DBURTORCH_MPI_SYSROOT=$_prefix_root/build/mpi-sysroot-arm64"
  fi
}
preset_targets() {  # preset_targets PRESET TARGET...
  local preset=$1
  shift
  if [ ! -f "$_prefix_root/build/$preset/CMakeCache.txt" ]; then
    # shellcheck disable=SC2046
    (cd "$_prefix_root" && cmake --preset "$preset" $(preset_flags "$preset")) >/dev/null || return 1
  fi
  cmake --build "$_prefix_root/build/$preset" -j2 --target "$@"
}
install_preset() {  # install_preset PRESET [TREE]
  local preset=$1 tree=${2:-$_prefix_root/build/$1} prefix=$_prefix_root/build/prefix/$1
  rm -rf "$prefix"
  cmake --install "$tree" --prefix "$prefix" >/dev/null || return 1
  touch "$prefix/.installed"
}
preset_prefix() {  # preset_prefix PRESET
  local preset=$1 tree=$_prefix_root/build/$1 prefix=$_prefix_root/build/prefix/$1
  if [ ! -f "$tree/CMakeCache.txt" ]; then
    tree=$_prefix_root/build/lib-$preset
    if [ ! -f "$tree/CMakeCache.txt" ]; then
      # shellcheck disable=SC2046
      (cd "$_prefix_root" && cmake --preset "$preset" -B "$tree" -DBURTORCH_BUILD_TESTS=OFF -DBURTORCH_BUILD_PROGRAMS=OFF \
        -DBURTORCH_BUILD_BENCH=OFF -DBURTORCH_BUILD_FOOTPRINT=OFF $(preset_flags "$preset")) >/dev/null || return 1
    fi
    cmake --build "$tree" -j2 >/dev/null || return 1
  fi
  # Reinstall when the archive, or a file the install copies (the headers,
  # the library's and port's sources for burtorch.mk, the importer, the CMake
  # package, the board files), is newer than the install: a stage run alone
  # after an edit never tests an old copy (a header-only change leaves the
  # archive as it was). (tools/check.d and Python's caches are not copied: a
  # full run never reinstalls partway through.)
  local stale=""
  if [ -f "$prefix/.installed" ]; then
    stale=$(cd "$_prefix_root" && find include port lib tools cmake targets toolchains -type f -newer "$prefix/.installed" \
      ! -path 'tools/check.d/*' ! -path '*/__pycache__/*' -print -quit 2>/dev/null)
  fi
  if [ ! -f "$prefix/.installed" ] || [ "$tree/libburtorch.a" -nt "$prefix/.installed" ] || [ -n "$stale" ]; then
    [ -f "$tree/libburtorch.a" ] || cmake --build "$tree" -j2 >/dev/null || return 1
    install_preset "$preset" "$tree" || return 1
  fi
  echo "$prefix"
}
