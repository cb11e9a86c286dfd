// SPDX-License-Identifier: Apache-2.0
/// @file
/// Files as byte streams. Implemented by the POSIX port (the file system) and
/// the Cortex-M port (files on the debug host through semihosting; there
/// commit() renames but cannot fsync). The null port has no files.
#ifndef BURTORCH_PORT_FILE_HPP
#define BURTORCH_PORT_FILE_HPP

#include "burtorch/tools/stream.hpp"

namespace burtorch {
namespace port {

/// Writes a file. With atomic = true the bytes go to "<path>.tmp", which
/// commit() flushes, fsyncs and renames over `path`, so a crash mid-save
/// leaves the previous file intact. Destroying an uncommitted writer removes
/// the temporary file.
///
/// POSIX, atomic = true: `path` must be a regular file or not exist (a
/// device, FIFO, directory or symbolic link there gives kInvalidArgument, at
/// open() and again at commit()). "<path>.tmp" is created exclusively and
/// never through a symbolic link (O_EXCL | O_NOFOLLOW): a regular file left
/// there by an interrupted save is replaced, anything else there gives
/// kInvalidArgument and is left alone. Other failures: kIoError.
class FileWriter {
 public:
  FileWriter() noexcept = default;
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;
  FileWriter(FileWriter&&) = delete;
  FileWriter& operator=(FileWriter&&) = delete;
  ~FileWriter();
  /// Creates `path` (with `atomic`: a temporary file next to it).
  Status open(const char* path, bool atomic) noexcept;
  /// The sink that writes to the file.
  ByteSink sink() noexcept;
  /// Flushes to storage and, when atomic, renames the temporary file over `path`.
  Status commit() noexcept;

 private:
  static Status write_callback(void* context, const std::uint8_t* data, std::size_t size);
  int fd_ = -1;
  bool atomic_ = false;
  Status status_ = Status::kOk;
  char path_[512] = {};
  char temp_path_[520] = {};
};

/// Reads a file. POSIX: only a regular file opens (a FIFO, a device such as
/// /dev/zero, a directory: kInvalidArgument, without waiting for a FIFO's
/// writer); a file that cannot be opened: kIoError.
class FileReader {
 public:
  FileReader() noexcept = default;
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;
  FileReader(FileReader&&) = delete;
  FileReader& operator=(FileReader&&) = delete;
  ~FileReader();
  /// Opens `path` for reading.
  Status open(const char* path) noexcept;
  /// A source that can rewind to the start of the file (load_checkpoint).
  ByteSource source() noexcept;

 private:
  static Status read_callback(void* context, std::uint8_t* data, std::size_t size, std::size_t* got);
  static Status rewind_callback(void* context);
  int fd_ = -1;
};

}  // namespace port
}  // namespace burtorch

#endif  // BURTORCH_PORT_FILE_HPP
