// A child process for integration tests: started with a stdout pipe, read line
// by line with a deadline, and always killed at scope exit - or, if this
// process dies first (a crash, SIGKILL), by the kernel: the child asks for
// SIGKILL when the thread that started it exits, so no broker, devchain or
// peer server outlives a crashed test or bench.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace cowboy::testing {

class ChildProcess {
 public:
  /// `stderr_file`: where the child's stderr goes (default: this process's stderr).
  explicit ChildProcess(std::vector<std::string> argv, const std::string& stderr_file = {}) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    std::vector<char*> args;  // built before fork: the child may only make async-signal-safe calls
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      // Killed when the starting thread exits; if the parent is already gone, exit now.
      if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
      ::dup2(fds[1], STDOUT_FILENO);
      if (!stderr_file.empty()) {
        int err = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (err >= 0) ::dup2(err, STDERR_FILENO);
      }
      ::execve(args[0], args.data(), environ);
      ::_exit(127);
    }
    ::close(fds[1]);
    out_ = fds[0];
  }
  ~ChildProcess() {
    kill(SIGKILL);
    if (out_ >= 0) ::close(out_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  /// The next line of stdout containing `needle`, or nullopt at the deadline or EOF.
  std::optional<std::string> wait_for_line(const std::string& needle,
                                           std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        if (line.find(needle) != std::string::npos) return line;
        continue;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      char chunk[4096];
      ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  /// The wait status if the process has exited by itself (reaped), nullopt while it runs.
  std::optional<int> exited() {
    if (pid_ <= 0) return exit_status_;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
    pid_ = -1;
    exit_status_ = status;
    return status;
  }

  /// Sends `signal` and reaps the process; returns its wait status.
  int kill(int signal) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
  int out_ = -1;
  std::string buffer_;
};

}  // namespace cowboy::testing
