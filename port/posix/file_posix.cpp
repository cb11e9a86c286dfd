#include <fcntl.h>
#include <unistd.h>

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
  fd_ = ::open(atomic ? temp_path_ : path_, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  return (fd_ >= 0) ? Status::kOk : Status::kIoError;
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
  fd_ = ::open(path, O_RDONLY | O_CLOEXEC);
  return (fd_ >= 0) ? Status::kOk : Status::kIoError;
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
