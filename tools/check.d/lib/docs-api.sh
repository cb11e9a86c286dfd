# SPDX-License-Identifier: Apache-2.0
# API reference: Doxygen (Debian doxygen) over the public headers, warnings
# as errors, into build/api-docs/html (not committed).
#   1. every public header, with the generated burtorch/build_config.hpp:
#      any doc-comment error fails;
#   2. the headers listed in docs/api/complete.txt with WARN_IF_UNDOCUMENTED:
#      a public name there without documentation fails.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
out="$root/build/api-docs"
rm -rf "$out"
mkdir -p "$out/generated/burtorch"
sed 's/@BURTORCH_BUILT_[A-Z_]*@/1/' "$root/cmake/build_config.hpp.in" > "$out/generated/burtorch/build_config.hpp"
cd "$root/docs/api"
echo "== the whole reference"
(cat Doxyfile; echo "INPUT += $out/generated/burtorch/build_config.hpp") | doxygen - > "$out/doxygen.log" 2>&1 || {
  cat "$out/doxygen.log"; echo "doxygen: warnings or errors above"; exit 1; }
cat "$out/doxygen.log"
[ -s "$out/html/index.html" ] || { echo "no build/api-docs/html/index.html"; exit 1; }
grep -q 'format_double' "$out/html/namespaceburtorch.html" || { echo "format_double missing from the reference"; exit 1; }
echo "== every public name documented in the headers of docs/api/complete.txt"
files=$(grep -v '^#' complete.txt | sed "s|^|$root/|" | tr '\n' ' ')
(cat Doxyfile; echo "INPUT = $files $out/generated/burtorch/build_config.hpp"; echo "WARN_IF_UNDOCUMENTED = YES"
 echo "EXTRACT_ALL = NO"; echo "OUTPUT_DIRECTORY = $out/strict"; echo "USE_MDFILE_AS_MAINPAGE ="
 echo "GENERATE_HTML = YES") | doxygen - > "$out/strict.log" 2>&1 || { cat "$out/strict.log"; echo "undocumented names above"; exit 1; }
cat "$out/strict.log"
echo "complete: $(grep -vc '^#' complete.txt) headers; not yet complete:"
for h in "$root"/include/burtorch/*.hpp "$root"/include/burtorch/nn/*.hpp "$root"/port/include/burtorch/port/*.hpp; do
  rel=${h#"$root"/}
  grep -qx "$rel" complete.txt || echo "  $rel"
done
echo "API reference: build/api-docs/html/index.html"
