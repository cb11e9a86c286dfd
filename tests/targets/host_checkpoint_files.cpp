// SPDX-License-Identifier: Apache-2.0
// Host only (POSIX files): checkpoints through port::FileWriter/FileReader.
// The file matches the independent Python encoder's bytes, a crash in the
// middle of a save (a child process that dies before commit) keeps the
// previous checkpoint, and damaged files on disk are rejected with the tape
// untouched. An atomic save never renames over anything but a regular file
// and never writes through a symbolic link planted at FILE.tmp; a reader
// opens only regular files, without waiting on a FIFO.
// Usage: host_checkpoint_files WORK_DIR SOURCE_DIR
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <burtorch/burtorch.hpp>
#include <burtorch/port/file.hpp>

#include <cstdio>
#include <cstring>

#include "harness.hpp"

namespace bt = burtorch;

namespace {

const char* g_work = ".";
const char* g_source = ".";
const double kTinyValues[7] = {-41.0, 2.0, -39.0, -74.0, 35.0, 1225.0, 612.5};

void path_in(char* out, std::size_t capacity, const char* dir, const char* name) {
  std::snprintf(out, capacity, "%s/%s", dir, name);
}

long file_size(const char* path) {
  struct stat st {};
  return (::stat(path, &st) == 0) ? static_cast<long>(st.st_size) : -1L;
}

std::size_t read_file(const char* path, std::uint8_t* out, std::size_t capacity) {
  std::FILE* f = std::fopen(path, "rb");
  if (f == nullptr) {
    return 0U;
  }
  const std::size_t n = std::fread(out, 1U, capacity, f);
  std::fclose(f);
  return n;
}

bool write_file(const char* path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path, "wb");
  if (f == nullptr) {
    return false;
  }
  const bool ok = std::fwrite(data, 1U, size, f) == size;
  return (std::fclose(f) == 0) && ok;
}

bt::Tape<double>& leaves(bt::FixedTape<double, 16>& tape, double offset) {
  tape.reset();
  for (double v : kTinyValues) {
    static_cast<void>(tape.leaf(v + offset));
  }
  return tape;
}

bt::Status save_file(const bt::Tape<double>& tape, const char* path) {
  bt::port::FileWriter file;
  bt::Status s = file.open(path, true);
  if (s == bt::Status::kOk) {
    s = bt::save_nodes(tape, 0U, 7U, false, file.sink());
  }
  const bt::Status committed = file.commit();
  return (s != bt::Status::kOk) ? s : committed;
}

bt::Status load_file(bt::Tape<double>& tape, const char* path) {
  bt::port::FileReader file;
  const bt::Status s = file.open(path);
  return (s != bt::Status::kOk) ? s : bt::load_nodes(tape, 0U, 7U, false, file.source());
}

bool holds(const bt::Tape<double>& tape, double offset) {
  bool same = true;
  for (bt::Index i = 0U; i < 7U; ++i) {
    same = same && (tape.value(i) == (kTinyValues[i] + offset));
  }
  return same;
}

void file_matches_reference_encoder(bt_test::Context& t) {
  static bt::FixedTape<double, 16> tape;
  char path[512];
  char golden[512];
  path_in(path, sizeof(path), g_work, "tiny.ckpt");
  path_in(golden, sizeof(golden), g_source, "fuzz/corpus/tiny_f64.bin");
  BT_CHECK(t, save_file(leaves(tape, 0.0), path) == bt::Status::kOk);
  BT_CHECK(t, file_size(path) == 84L);  // 56 bytes of values + 28
  std::uint8_t mine[256];
  std::uint8_t theirs[256];
  const std::size_t n = read_file(path, mine, sizeof(mine));
  const std::size_t m = read_file(golden, theirs, sizeof(theirs));
  BT_CHECK(t, (n == 84U) && (m == 84U) && (std::memcmp(mine, theirs, 84U) == 0));
  static bt::FixedTape<double, 16> other;
  BT_CHECK(t, load_file(leaves(other, 100.0), path) == bt::Status::kOk);
  BT_CHECK(t, holds(other, 0.0));
}

void crash_mid_save_keeps_previous(bt_test::Context& t) {
  static bt::FixedTape<double, 16> tape;
  char path[512];
  char temp[520];
  path_in(path, sizeof(path), g_work, "crash.ckpt");
  std::snprintf(temp, sizeof(temp), "%s.tmp", path);
  static_cast<void>(::unlink(temp));
  BT_CHECK(t, save_file(leaves(tape, 0.0), path) == bt::Status::kOk);

  // The child starts saving other values and dies after 40 bytes, before
  // commit: no destructor runs, as in a power cut or a kill -9.
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child == 0) {
    static bt::FixedTape<double, 16> next;
    bt::port::FileWriter file;
    std::uint8_t bytes[128];
    bt::MemoryStream m{bytes, sizeof(bytes), 0U, 0U};
    if ((file.open(path, true) != bt::Status::kOk) ||
        (bt::save_nodes(leaves(next, 1.0), 0U, 7U, false, bt::memory_sink(&m)) != bt::Status::kOk) ||
        (bt::write_bytes(file.sink(), bytes, 40U) != bt::Status::kOk)) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  int status = -1;
  BT_CHECK(t, (child > 0) && (::waitpid(child, &status, 0) == child));
  BT_CHECK(t, WIFEXITED(status) && (WEXITSTATUS(status) == 0));
  BT_CHECK(t, file_size(temp) == 40L);  // the crash left a partial temp file

  // The checkpoint itself is the previous one, whole.
  static bt::FixedTape<double, 16> loaded;
  BT_CHECK(t, load_file(leaves(loaded, 50.0), path) == bt::Status::kOk);
  BT_CHECK(t, holds(loaded, 0.0));
  // The partial temp file is rejected and changes nothing.
  BT_CHECK(t, load_file(leaves(loaded, 50.0), temp) == bt::Status::kTruncated);
  BT_CHECK(t, holds(loaded, 50.0));

  // The next save overwrites the stale temp file and commits.
  BT_CHECK(t, save_file(leaves(tape, 1.0), path) == bt::Status::kOk);
  BT_CHECK(t, file_size(temp) == -1L);
  BT_CHECK(t, load_file(leaves(loaded, 50.0), path) == bt::Status::kOk);
  BT_CHECK(t, holds(loaded, 1.0));
}

void damaged_files_are_rejected(bt_test::Context& t) {
  static bt::FixedTape<double, 16> tape;
  char path[512];
  char damaged[512];
  path_in(path, sizeof(path), g_work, "good.ckpt");
  path_in(damaged, sizeof(damaged), g_work, "damaged.ckpt");
  BT_CHECK(t, save_file(leaves(tape, 0.0), path) == bt::Status::kOk);
  std::uint8_t bytes[128];
  const std::size_t n = read_file(path, bytes, sizeof(bytes));
  BT_CHECK(t, n == 84U);

  static bt::FixedTape<double, 16> loaded;
  BT_CHECK(t, write_file(damaged, bytes, 60U));
  BT_CHECK(t, load_file(leaves(loaded, 7.0), damaged) == bt::Status::kTruncated);
  BT_CHECK(t, holds(loaded, 7.0));

  bytes[50] = static_cast<std::uint8_t>(bytes[50] ^ 0x04U);
  BT_CHECK(t, write_file(damaged, bytes, n));
  BT_CHECK(t, load_file(leaves(loaded, 7.0), damaged) == bt::Status::kChecksumMismatch);
  BT_CHECK(t, holds(loaded, 7.0));

  bytes[50] = static_cast<std::uint8_t>(bytes[50] ^ 0x04U);
  bytes[1] = 'X';
  BT_CHECK(t, write_file(damaged, bytes, n));
  BT_CHECK(t, load_file(leaves(loaded, 7.0), damaged) == bt::Status::kBadFormat);
  BT_CHECK(t, holds(loaded, 7.0));

  BT_CHECK(t, write_file(damaged, bytes, 0U));
  BT_CHECK(t, load_file(leaves(loaded, 7.0), damaged) == bt::Status::kTruncated);
  BT_CHECK(t, holds(loaded, 7.0));

  char missing[512];
  path_in(missing, sizeof(missing), g_work, "no-such-file.ckpt");
  BT_CHECK(t, load_file(leaves(loaded, 7.0), missing) == bt::Status::kIoError);
  BT_CHECK(t, holds(loaded, 7.0));
}

void full_disk_is_reported(bt_test::Context& t) {
  // /dev/full fails every write with ENOSPC.
  static bt::FixedTape<double, 16> tape;
  bt::port::FileWriter file;
  if (file.open("/dev/full", false) != bt::Status::kOk) {
    bt_test::print("  (no /dev/full: checking a missing directory instead)\n");
    BT_CHECK(t, file.open("/no-such-dir/x.ckpt", true) == bt::Status::kIoError);
    return;
  }
  BT_CHECK(t, bt::save_nodes(leaves(tape, 0.0), 0U, 7U, false, file.sink()) == bt::Status::kIoError);
  BT_CHECK(t, file.commit() == bt::Status::kIoError);
}

bool is_fifo(const char* path) {
  struct stat st {};
  return (::lstat(path, &st) == 0) && S_ISFIFO(st.st_mode);
}

bool exists(const char* path) {
  struct stat st {};
  return ::lstat(path, &st) == 0;
}

bt::Status save_tiny(const char* path, double offset) {
  static bt::FixedTape<double, 16> tape;
  bt::port::FileWriter file;
  bt::Status s = file.open(path, true);
  if (s == bt::Status::kOk) {
    s = bt::save_nodes(leaves(tape, offset), 0U, 7U, false, file.sink());
  }
  return (s == bt::Status::kOk) ? file.commit() : s;
}

void atomic_save_refuses_non_regular_targets(bt_test::Context& t) {
  char fifo[512];
  char fifo_tmp[520];
  path_in(fifo, sizeof(fifo), g_work, "target.fifo");
  std::snprintf(fifo_tmp, sizeof(fifo_tmp), "%s.tmp", fifo);
  static_cast<void>(::unlink(fifo));
  BT_CHECK(t, ::mkfifo(fifo, 0600) == 0);
  BT_CHECK(t, save_tiny(fifo, 0.0) == bt::Status::kInvalidArgument);
  BT_CHECK(t, is_fifo(fifo));
  BT_CHECK(t, !exists(fifo_tmp));
  // A directory, and a symbolic link (even to a regular file).
  BT_CHECK(t, save_tiny(g_work, 0.0) == bt::Status::kInvalidArgument);
  char regular[512];
  char link[512];
  path_in(regular, sizeof(regular), g_work, "regular.ckpt");
  path_in(link, sizeof(link), g_work, "link.ckpt");
  BT_CHECK(t, save_tiny(regular, 1.0) == bt::Status::kOk);
  static_cast<void>(::unlink(link));
  BT_CHECK(t, ::symlink(regular, link) == 0);
  BT_CHECK(t, save_tiny(link, 2.0) == bt::Status::kInvalidArgument);
  static bt::FixedTape<double, 16> loaded;
  BT_CHECK(t, load_file(leaves(loaded, 9.0), regular) == bt::Status::kOk);
  BT_CHECK(t, holds(loaded, 1.0));
  // The target replaced by a FIFO between open() and commit(): no rename.
  char later[512];
  char later_tmp[520];
  path_in(later, sizeof(later), g_work, "later.ckpt");
  std::snprintf(later_tmp, sizeof(later_tmp), "%s.tmp", later);
  static_cast<void>(::unlink(later));
  {
    static bt::FixedTape<double, 16> tape;
    bt::port::FileWriter file;
    BT_CHECK(t, file.open(later, true) == bt::Status::kOk);
    BT_CHECK(t, bt::save_nodes(leaves(tape, 0.0), 0U, 7U, false, file.sink()) == bt::Status::kOk);
    BT_CHECK(t, ::mkfifo(later, 0600) == 0);
    BT_CHECK(t, file.commit() == bt::Status::kInvalidArgument);
  }
  BT_CHECK(t, is_fifo(later));
  BT_CHECK(t, !exists(later_tmp));
}

void temporary_is_created_exclusively(bt_test::Context& t) {
  char victim[512];
  char target[512];
  char temp[520];
  path_in(victim, sizeof(victim), g_work, "victim.txt");
  path_in(target, sizeof(target), g_work, "exclusive.ckpt");
  std::snprintf(temp, sizeof(temp), "%s.tmp", target);
  static const std::uint8_t kPrecious[9] = {'p', 'r', 'e', 'c', 'i', 'o', 'u', 's', '\n'};
  BT_CHECK(t, write_file(victim, kPrecious, sizeof(kPrecious)));
  static_cast<void>(::unlink(target));
  static_cast<void>(::unlink(temp));
  // FILE.tmp a symbolic link to the victim: never followed, left alone.
  BT_CHECK(t, ::symlink(victim, temp) == 0);
  BT_CHECK(t, save_tiny(target, 0.0) == bt::Status::kInvalidArgument);
  std::uint8_t back[64] = {};
  BT_CHECK(t, read_file(victim, back, sizeof(back)) == sizeof(kPrecious));
  BT_CHECK(t, std::memcmp(back, kPrecious, sizeof(kPrecious)) == 0);
  BT_CHECK(t, !exists(target));
  struct stat st {};
  BT_CHECK(t, (::lstat(temp, &st) == 0) && S_ISLNK(st.st_mode));
  // A dangling link there is not followed either (O_CREAT would create its target).
  char dangling_target[512];
  path_in(dangling_target, sizeof(dangling_target), g_work, "created-through-link.txt");
  static_cast<void>(::unlink(dangling_target));
  BT_CHECK(t, ::unlink(temp) == 0);
  BT_CHECK(t, ::symlink(dangling_target, temp) == 0);
  BT_CHECK(t, save_tiny(target, 0.0) == bt::Status::kInvalidArgument);
  BT_CHECK(t, !exists(dangling_target));
  // A stale regular FILE.tmp (an interrupted save) is replaced.
  BT_CHECK(t, ::unlink(temp) == 0);
  BT_CHECK(t, write_file(temp, kPrecious, sizeof(kPrecious)));
  BT_CHECK(t, save_tiny(target, 3.0) == bt::Status::kOk);
  BT_CHECK(t, !exists(temp));
  static bt::FixedTape<double, 16> loaded;
  BT_CHECK(t, load_file(leaves(loaded, 9.0), target) == bt::Status::kOk);
  BT_CHECK(t, holds(loaded, 3.0));
}

void reader_opens_only_regular_files(bt_test::Context& t) {
  char fifo[512];
  path_in(fifo, sizeof(fifo), g_work, "reader.fifo");
  static_cast<void>(::unlink(fifo));
  BT_CHECK(t, ::mkfifo(fifo, 0600) == 0);
  bt::port::FileReader from_fifo;  // would block in open() without O_NONBLOCK
  BT_CHECK(t, from_fifo.open(fifo) == bt::Status::kInvalidArgument);
  bt::port::FileReader from_zero;  // would never reach an end
  BT_CHECK(t, from_zero.open("/dev/zero") == bt::Status::kInvalidArgument);
  bt::port::FileReader from_dir;
  BT_CHECK(t, from_dir.open(g_work) == bt::Status::kInvalidArgument);
  static bt::FixedTape<double, 16> loaded;
  BT_CHECK(t, load_file(leaves(loaded, 7.0), fifo) == bt::Status::kInvalidArgument);
  BT_CHECK(t, holds(loaded, 7.0));
}

const bt_test::TestCase kCases[] = {
    {"atomic_save_refuses_non_regular_targets", atomic_save_refuses_non_regular_targets},
    {"temporary_is_created_exclusively", temporary_is_created_exclusively},
    {"reader_opens_only_regular_files", reader_opens_only_regular_files},
    {"file_matches_reference_encoder", file_matches_reference_encoder},
    {"crash_mid_save_keeps_previous", crash_mid_save_keeps_previous},
    {"damaged_files_are_rejected", damaged_files_are_rejected},
    {"full_disk_is_reported", full_disk_is_reported},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: host_checkpoint_files WORK_DIR SOURCE_DIR\n");
    return 2;
  }
  g_work = argv[1];
  g_source = argv[2];
  static_cast<void>(::mkdir(g_work, 0755));
  return bt_test::run("checkpoint_files", kCases, sizeof(kCases) / sizeof(kCases[0]));
}
