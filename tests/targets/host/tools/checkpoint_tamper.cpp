// SPDX-License-Identifier: Apache-2.0
// Test tool: rewrites one field of a checkpoint and gives it a valid CRC
// again, so tests can hand the trainers checkpoints that pass every frame
// and CRC check but hold impossible values. Written from the layout in
// docs/checkpoint-format.md alone (its own parser and bitwise CRC-32), not
// from the library's loader.
//
//   checkpoint_tamper IN OUT set TAG OFFSET VALUE   u64 (little-endian) at
//                                                   byte OFFSET of section TAG
//   checkpoint_tamper IN OUT setf64 TAG INDEX VALUE float64 number INDEX of TAG
//                                                   (a negative INDEX counts from the end)
//   checkpoint_tamper IN OUT resize TAG BYTES       cut or zero-extend TAG
// VALUE and BYTES are decimal or 0x-hex; TAG is four characters ("TRNR").
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::uint64_t get_le(const std::vector<unsigned char>& b, std::size_t at, int bytes) {
  std::uint64_t v = 0U;
  for (int i = bytes - 1; i >= 0; --i) {
    v = (v << 8U) | b[at + static_cast<std::size_t>(i)];
  }
  return v;
}

void put_le(std::vector<unsigned char>& b, std::size_t at, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    b[at + static_cast<std::size_t>(i)] = static_cast<unsigned char>(v >> (8 * i));
  }
}

// CRC-32 (IEEE, reflected, as zlib), one bit at a time.
std::uint32_t crc32_bitwise(const unsigned char* data, std::size_t n) {
  std::uint32_t crc = 0xFFFFFFFFU;
  for (std::size_t i = 0U; i < n; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) {
      crc = ((crc & 1U) != 0U) ? ((crc >> 1U) ^ 0xEDB88320U) : (crc >> 1U);
    }
  }
  return ~crc;
}

[[noreturn]] void die(const std::string& m) {
  std::fprintf(stderr, "checkpoint_tamper: %s\n", m.c_str());
  std::exit(1);
}

std::uint64_t number(const char* text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 0);
  if ((end == text) || (*end != '\0')) {
    die(std::string("not a number: ") + text);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if ((argc == 2) && ((std::strcmp(argv[1], "--help") == 0) || (std::strcmp(argv[1], "-h") == 0))) {
    std::puts("usage: checkpoint_tamper IN OUT set|setf64|resize TAG ARG VALUE (resize: TAG BYTES -)\n"
              "Test tool: rewrites a field of a checkpoint's section and its CRC.");
    return 0;
  }
  if (argc != 7) {
    std::fprintf(stderr, "usage: checkpoint_tamper IN OUT set|setf64|resize TAG ARG VALUE (resize: TAG BYTES -)\n");
    return 2;
  }
  std::vector<unsigned char> in;
  if (std::FILE* f = std::fopen(argv[1], "rb")) {
    int c = 0;
    while ((c = std::fgetc(f)) != EOF) {
      in.push_back(static_cast<unsigned char>(c));
    }
    std::fclose(f);
  } else {
    die(std::string("cannot read ") + argv[1]);
  }
  if ((in.size() < 16U) || (std::memcmp(in.data(), "BTCK", 4U) != 0)) {
    die("not a checkpoint");
  }
  const std::uint64_t count = get_le(in, 8U, 4);
  if (in.size() < 16U + 12U * count) {
    die("truncated table");
  }
  const std::string op = argv[3];
  const std::string tag = argv[4];
  if (tag.size() != 4U) {
    die("a tag has four characters");
  }
  // Locate the section.
  std::size_t offset = 12U + 12U * static_cast<std::size_t>(count);
  std::size_t which = count;
  std::size_t size = 0U;
  for (std::size_t i = 0U; i < count; ++i) {
    const std::size_t entry = 12U + 12U * i;
    const std::uint64_t bytes = get_le(in, entry + 4U, 8);
    if ((which == count) && (std::memcmp(&in[entry], tag.data(), 4U) == 0)) {
      which = i;
      size = static_cast<std::size_t>(bytes);
    } else if (which == count) {
      offset += static_cast<std::size_t>(bytes);
    }
  }
  if (which == count) {
    die("no section " + tag);
  }
  std::vector<unsigned char> out(in.begin(), in.end() - 4);  // without the CRC
  if (op == "set") {
    const std::uint64_t at = number(argv[5]);
    if (at + 8U > size) {
      die("offset outside the section");
    }
    put_le(out, offset + static_cast<std::size_t>(at), number(argv[6]), 8);
  } else if (op == "setf64") {
    const long long signed_index = std::strtoll(argv[5], nullptr, 0);
    const std::uint64_t index = (signed_index < 0) ? (size / 8U) - static_cast<std::uint64_t>(-signed_index)
                                                   : static_cast<std::uint64_t>(signed_index);
    if ((index + 1U) * 8U > size) {
      die("index outside the section");
    }
    const double v = std::strtod(argv[6], nullptr);
    std::uint64_t bits = 0U;
    std::memcpy(&bits, &v, sizeof(bits));
    put_le(out, offset + static_cast<std::size_t>(index) * 8U, bits, 8);
  } else if (op == "resize") {
    const std::size_t bytes = static_cast<std::size_t>(number(argv[5]));
    std::vector<unsigned char> section(out.begin() + static_cast<long>(offset),
                                       out.begin() + static_cast<long>(offset + size));
    section.resize(bytes, 0U);
    out.erase(out.begin() + static_cast<long>(offset), out.begin() + static_cast<long>(offset + size));
    out.insert(out.begin() + static_cast<long>(offset), section.begin(), section.end());
    put_le(out, 12U + 12U * which + 4U, bytes, 8);
  } else {
    die("unknown operation " + op);
  }
  const std::uint32_t crc = crc32_bitwise(out.data(), out.size());
  out.resize(out.size() + 4U);
  put_le(out, out.size() - 4U, crc, 4);
  std::FILE* f = std::fopen(argv[2], "wb");
  if ((f == nullptr) || (std::fwrite(out.data(), 1U, out.size(), f) != out.size()) || (std::fclose(f) != 0)) {
    die(std::string("cannot write ") + argv[2]);
  }
  return 0;
}
