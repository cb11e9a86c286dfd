// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "burtorch/port/file.hpp"

namespace burtorch {
namespace port {

FileWriter::~FileWriter() {
  if (fd_ >= 0) {
    static_cast<void>(::close(fd_));
    if (atomic_) {
      static_cast<void>(::unlink(temp_path_));
    }
  }
}

namespace {

// The mode a created file gets before the umask: read and write for its
// owner, read for the others (rw-r--r--).
constexpr mode_t kCreateMode = S_IRUSR | S_IWUSR | S_IRGRP | S_IROTH;

// The port's one call to open(2), which POSIX declares variadic: its third
// argument, the mode, is read only when the flags create the file, and is
// passed every time (ignored otherwise).
int open_path(const char* path, int flags) noexcept {
  // BT-DEV-025: open(2) is a C variadic function; no non-variadic POSIX call opens with these flags
  return ::open(path, flags, kCreateMode);
}

// True if nothing is at `path` or a regular file is (not following a
// symbolic link: a link, a device, a FIFO or a directory is refused).
bool absent_or_regular(const char* path) noexcept {
  struct stat st {};
  if (::lstat(path, &st) != 0) {
    return errno == ENOENT;
  }
  return S_ISREG(st.st_mode);
}

// Creates `path` exclusively, never through a symbolic link. A stale
// regular file left there by an interrupted save is removed first; anything
// else in its place (a link, a FIFO, a device) is left alone and refused.
int create_exclusive(const char* path) noexcept {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
  int fd = open_path(path, kFlags);
  if ((fd < 0) && (errno == EEXIST)) {
    struct stat st {};
    if ((::lstat(path, &st) == 0) && S_ISREG(st.st_mode) && (::unlink(path) == 0)) {
      fd = open_path(path, kFlags);
    } else {
      errno = EEXIST;
    }
  }
  return fd;
}

}  // namespace

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
  if (!atomic) {
    fd_ = open_path(path_, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC);
    return (fd_ >= 0) ? Status::kOk : Status::kIoError;
  }
  // An atomic save replaces a regular file or creates one; it never renames
  // over a device, a FIFO, a directory or a symbolic link.
  if (!absent_or_regular(path_)) {
    return Status::kInvalidArgument;
  }
  fd_ = create_exclusive(temp_path_);
  if (fd_ >= 0) {
    return Status::kOk;
  }
  return (errno == EEXIST) ? Status::kInvalidArgument : Status::kIoError;
}

Status FileWriter::write_callback(void* context, const std::uint8_t* data, std::size_t size) {
  FileWriter* self = static_cast<FileWriter*>(context);
  while ((size > 0U) && (self->status_ == Status::kOk)) {
    const ssize_t done = ::write(self->fd_, data, size);
    if (done <= 0) {
      self->status_ = Status::kIoError;
    } else {
      data += done;
      size -= static_cast<std::size_t>(done);
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
  if ((s == Status::kOk) && (::fsync(fd_) != 0)) {
    s = Status::kIoError;
  }
  if (::close(fd_) != 0) {
    s = Status::kIoError;
  }
  fd_ = -1;
  if (atomic_) {
    // Checked again just before the rename: the target may have changed
    // since open().
    if ((s == Status::kOk) && !absent_or_regular(path_)) {
      s = Status::kInvalidArgument;
    }
    if ((s == Status::kOk) && (std::rename(temp_path_, path_) != 0)) {
      s = Status::kIoError;
    }
    if (s != Status::kOk) {
      static_cast<void>(::unlink(temp_path_));
    }
  }
  return s;
}

FileReader::~FileReader() {
  if (fd_ >= 0) {
    static_cast<void>(::close(fd_));
  }
}

Status FileReader::open(const char* path) noexcept {
  if (fd_ >= 0) {
    return Status::kInvalidArgument;
  }
  // O_NONBLOCK: opening a FIFO without a writer must not wait; it is then
  // refused like every other file that is not a regular file (a device such
  // as /dev/zero has no end, a FIFO or a terminal cannot rewind).
  fd_ = open_path(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) {
    return Status::kIoError;
  }
  struct stat st {};
  if ((::fstat(fd_, &st) != 0) || !S_ISREG(st.st_mode)) {
    static_cast<void>(::close(fd_));
    fd_ = -1;
    return Status::kInvalidArgument;
  }
  return Status::kOk;
}

Status FileReader::read_callback(void* context, std::uint8_t* data, std::size_t size, std::size_t* got) {
  FileReader* self = static_cast<FileReader*>(context);
  std::size_t total = 0U;
  while (total < size) {
    const ssize_t done = ::read(self->fd_, &data[total], size - total);
    if (done < 0) {
      *got = total;
      return Status::kIoError;
    }
    if (done == 0) {
      break;
    }
    total += static_cast<std::size_t>(done);
  }
  *got = total;
  return Status::kOk;
}

Status FileReader::rewind_callback(void* context) {
  const FileReader* self = static_cast<const FileReader*>(context);
  return (::lseek(self->fd_, 0, SEEK_SET) == 0) ? Status::kOk : Status::kIoError;
}

ByteSource FileReader::source() noexcept { return ByteSource{&read_callback, this, &rewind_callback}; }

}  // namespace port
}  // namespace burtorch
