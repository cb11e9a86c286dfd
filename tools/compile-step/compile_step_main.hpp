// SPDX-License-Identifier: Apache-2.0
// The host side of a compiled training step (cmake/BurtorchCompileStep.cmake,
// burtorch_compile_step): a generator program records the model with the
// model's own code, then calls write_step() for each step it compiles; the
// build runs it with the output directory as its one argument, and
// compiles what it writes (<dir>/<name>.hpp and <dir>/<name>.cpp) into the
// firmware. A host program (files through stdio): not part of the library.
// A file whose text would not change is not rewritten (no rebuild).
#ifndef BURTORCH_TOOLS_COMPILE_STEP_MAIN_HPP
#define BURTORCH_TOOLS_COMPILE_STEP_MAIN_HPP

#include <burtorch/burtorch.hpp>
#include <burtorch/compile/emit.hpp>
#include <burtorch/tools/stream.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace burtorch_compile {

inline burtorch::Status append_text(void* context, const std::uint8_t* data, std::size_t size) noexcept {
  static_cast<std::string*>(context)->append(reinterpret_cast<const char*>(data), size);
  return burtorch::Status::kOk;
}

inline bool write_if_changed(const std::string& path, const std::string& text) {
  std::string old;
  if (std::FILE* in = std::fopen(path.c_str(), "rb")) {
    char buffer[4096];
    std::size_t n = 0U;
    while ((n = std::fread(buffer, 1U, sizeof(buffer), in)) != 0U) {
      old.append(buffer, n);
    }
    std::fclose(in);
  }
  if (old == text) {
    return true;
  }
  std::FILE* out = std::fopen(path.c_str(), "wb");
  const bool ok = (out != nullptr) && (std::fwrite(text.data(), 1U, text.size(), out) == text.size());
  return (out != nullptr) && (std::fclose(out) == 0) && ok;
}

// Writes <dir>/<spec.name>.hpp and .cpp; false (and why, on stderr) if the
// emitter refused the recording or a file could not be written.
template <class T>
bool write_step(const char* dir, const burtorch::Tape<T>& tape, burtorch::Mark from, burtorch::Value<T> loss,
                burtorch::compile::StepSpec spec) {
  const std::string base = std::string(dir) + "/" + spec.name;
  const std::string header = std::string(spec.name) + ".hpp";
  spec.header = header.c_str();
  const burtorch::compile::Part parts[] = {burtorch::compile::Part::kHeader, burtorch::compile::Part::kSource};
  const char* const suffixes[] = {".hpp", ".cpp"};
  for (int p = 0; p < 2; ++p) {
    std::string text;
    const burtorch::ByteSink sink{&append_text, &text};
    const burtorch::compile::Refusal r = burtorch::compile::emit_step(tape, from, loss, spec, parts[p], sink);
    if (r.status != burtorch::Status::kOk) {
      std::fprintf(stderr, "burtorch_compile_step: %s: refused (%s) at node %lu: %s\n", spec.name,
                   burtorch::status_name(r.status), static_cast<unsigned long>(r.node), r.reason);
      return false;
    }
    if (!write_if_changed(base + suffixes[p], text)) {
      std::fprintf(stderr, "burtorch_compile_step: cannot write %s%s\n", base.c_str(), suffixes[p]);
      return false;
    }
  }
  return true;
}

// The output directory from the command line, or null (and the usage on stderr).
inline const char* output_dir(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output directory>\n", (argc > 0) ? argv[0] : "generator");
    return nullptr;
  }
  return argv[1];
}

}  // namespace burtorch_compile

#endif  // BURTORCH_TOOLS_COMPILE_STEP_MAIN_HPP
