// SPDX-License-Identifier: Apache-2.0
// Test tool: runs a program with stdout and stderr on a pseudo-terminal (as
// in an interactive shell) and prints the lines a terminal would show at the
// end: '\r' returns to the start of the line and later characters overwrite
// earlier ones, '\n' ends the line. A progress line that is not erased before
// other output therefore shows up here mixed into that output.
//
//   pty_screen PROGRAM [ARGS...]     exit status: the program's
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if ((argc >= 2) && ((std::string(argv[1]) == "--help") || (std::string(argv[1]) == "-h"))) {
    std::printf("usage: pty_screen PROGRAM [ARGS...]\nTest tool: the lines a terminal shows of PROGRAM's output.\n");
    return 0;
  }
  if ((argc < 2) || (argv[1][0] == '-')) {
    std::fprintf(stderr, "usage: pty_screen PROGRAM [ARGS...]\n");
    return 2;
  }
  int master = -1;
  const pid_t child = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (child < 0) {
    std::perror("pty_screen: forkpty");
    return 2;
  }
  if (child == 0) {
    ::execvp(argv[1], &argv[1]);
    std::perror("pty_screen: exec");
    std::_Exit(127);
  }
  std::vector<std::string> lines;
  std::string line;
  std::size_t column = 0U;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(master, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;  // EIO once the child has closed the terminal
    }
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buffer[i];
      if (c == '\r') {
        column = 0U;
      } else if (c == '\n') {
        lines.push_back(line);
        line.clear();
        column = 0U;
      } else {
        if (column < line.size()) {
          line[column] = c;
        } else {
          line.push_back(c);
        }
        ++column;
      }
    }
  }
  if (!line.empty()) {
    lines.push_back(line);
  }
  int status = 0;
  static_cast<void>(::waitpid(child, &status, 0));
  for (const std::string& l : lines) {
    // Trailing blanks are what erasing a line leaves behind; a terminal shows nothing.
    const std::size_t end = l.find_last_not_of(' ');
    std::printf("%s\n", (end == std::string::npos) ? "" : l.substr(0U, end + 1U).c_str());
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
