// SPDX-License-Identifier: Apache-2.0
// burtorch/port/file.hpp on Cortex-M: files on the debug host (or QEMU's
// working directory) through semihosting. Same contract as the POSIX port,
// except that commit() cannot ask the host to fsync.
#include <cstring>

#include "burtorch/port/file.hpp"
#include "burtorch/port/semihosting.hpp"

namespace burtorch {
namespace port {

namespace {

namespace sh = semihosting;

constexpr std::uint32_t kModeReadBinary = 1U;   // "rb"
constexpr std::uint32_t kModeWriteBinary = 5U;  // "wb"
constexpr std::uint32_t kFailed = 0xFFFFFFFFU;  // -1 from the host

std::uint32_t word(const void* p) noexcept {
  return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p));  // BT-DEV-021: address in a parameter block
}

int open_file(const char* path, std::uint32_t mode) noexcept {
  const std::uint32_t block[3] = {word(path), mode, static_cast<std::uint32_t>(std::strlen(path))};
  const std::uint32_t handle = sh::call(sh::Op::kOpen, block);
  return (handle == kFailed) ? -1 : static_cast<int>(handle);
}

bool close_file(int handle) noexcept {
  const std::uint32_t block[1] = {static_cast<std::uint32_t>(handle)};
  return sh::call(sh::Op::kClose, block) == 0U;
}

void remove_file(const char* path) noexcept {
  const std::uint32_t block[2] = {word(path), static_cast<std::uint32_t>(std::strlen(path))};
  static_cast<void>(sh::call(sh::Op::kRemove, block));
}

bool rename_file(const char* from, const char* to) noexcept {
  const std::uint32_t block[4] = {word(from), static_cast<std::uint32_t>(std::strlen(from)), word(to),
                                  static_cast<std::uint32_t>(std::strlen(to))};
  return sh::call(sh::Op::kRename, block) == 0U;
}

}  // namespace

FileWriter::~FileWriter() {
  if (fd_ >= 0) {
    static_cast<void>(close_file(fd_));
    if (atomic_) {
      remove_file(temp_path_);
    }
  }
}

Status FileWriter::open(const char* path, bool atomic) noexcept {
  const std::size_t length = std::strlen(path);
  if ((fd_ >= 0) || (length + 5U > sizeof(path_))) {
    return Status::kInvalidArgument;
  }
  std::memcpy(path_, path, length + 1U);
  std::memcpy(temp_path_, path, length);
  std::memcpy(&temp_path_[length], ".tmp", 5U);
  atomic_ = atomic;
  status_ = Status::kOk;
  fd_ = open_file(atomic ? temp_path_ : path_, kModeWriteBinary);
  return (fd_ >= 0) ? Status::kOk : Status::kIoError;
}

Status FileWriter::write_callback(void* context, const std::uint8_t* data, std::size_t size) {
  FileWriter* self = static_cast<FileWriter*>(context);
  if ((self->status_ == Status::kOk) && (size > 0U)) {
    const std::uint32_t block[3] = {static_cast<std::uint32_t>(self->fd_), word(data),
                                    static_cast<std::uint32_t>(size)};
    // The host returns the number of bytes it did not write.
    if (sh::call(sh::Op::kWrite, block) != 0U) {
      self->status_ = Status::kIoError;
    }
  }
  return self->status_;
}

ByteSink FileWriter::sink() noexcept { return ByteSink{&write_callback, this}; }

Status FileWriter::commit() noexcept {
  if (fd_ < 0) {
    return Status::kInvalidArgument;
  }
  Status s = status_;
  if (!close_file(fd_)) {
    s = Status::kIoError;
  }
  fd_ = -1;
  if (atomic_) {
    if ((s == Status::kOk) && !rename_file(temp_path_, path_)) {
      s = Status::kIoError;
    }
    if (s != Status::kOk) {
      remove_file(temp_path_);
    }
  }
  return s;
}

FileReader::~FileReader() {
  if (fd_ >= 0) {
    static_cast<void>(close_file(fd_));
  }
}

Status FileReader::open(const char* path) noexcept {
  if (fd_ >= 0) {
    return Status::kInvalidArgument;
  }
  fd_ = open_file(path, kModeReadBinary);
  return (fd_ >= 0) ? Status::kOk : Status::kIoError;
}

Status FileReader::read_callback(void* context, std::uint8_t* data, std::size_t size, std::size_t* got) {
  FileReader* self = static_cast<FileReader*>(context);
  std::size_t total = 0U;
  while (total < size) {
    const std::size_t want = size - total;
    const std::uint32_t block[3] = {static_cast<std::uint32_t>(self->fd_), word(&data[total]),
                                    static_cast<std::uint32_t>(want)};
    // The host returns the number of bytes it did not read (all of them at
    // end of file), or -1 on error.
    const std::uint32_t left = sh::call(sh::Op::kRead, block);
    if (left > want) {
      *got = total;
      return Status::kIoError;
    }
    if (left == want) {
      break;
    }
    total += want - left;
  }
  *got = total;
  return Status::kOk;
}

Status FileReader::rewind_callback(void* context) {
  const FileReader* self = static_cast<const FileReader*>(context);
  const std::uint32_t block[2] = {static_cast<std::uint32_t>(self->fd_), 0U};
  return (sh::call(sh::Op::kSeek, block) == 0U) ? Status::kOk : Status::kIoError;
}

ByteSource FileReader::source() noexcept { return ByteSource{&read_callback, this, &rewind_callback}; }

}  // namespace port
}  // namespace burtorch
