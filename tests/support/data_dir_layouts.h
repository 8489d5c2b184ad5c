// The layouts an operator gives a service's data directory (docs/operations.md,
// "Data directories"), for tests of the real binaries: an empty mount point (a
// tmpfs, else a bind mount of an empty directory), a symlink to an empty
// directory, and the first-start kill trials run in them.
#pragma once

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

#include "process.h"
#include "run.h"

namespace cowboy::testing {

/// An empty filesystem mounted at `at` (made if absent) until scope exit: a
/// tmpfs where this process may mount one, else a bind mount of an empty
/// directory; neither, and mounted() is false and why_not() says why. The
/// mounts are made in a mount namespace of this process's own (its children,
/// the services, share it), so that none outlives the process, even one
/// killed before its destructors ran.
class EmptyMount {
 public:
  explicit EmptyMount(std::filesystem::path at) : at_(std::move(at)) {
    static const bool kPrivate = ::unshare(CLONE_NEWNS) == 0 && ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
    (void)kPrivate;  // without it (not root), mounting fails below as well
    std::filesystem::create_directories(at_);
    if (::mount("tmpfs", at_.c_str(), "tmpfs", 0, "size=256m,mode=0755") == 0) {
      kind_ = "tmpfs";
      return;
    }
    const std::string tmpfs_error = std::strerror(errno);
    source_ = at_;
    source_ += ".bind-source";
    std::filesystem::create_directories(source_);
    if (::mount(source_.c_str(), at_.c_str(), nullptr, MS_BIND, nullptr) == 0) {
      kind_ = "bind";
      return;
    }
    why_not_ = "mount -t tmpfs: " + tmpfs_error + "; mount --bind: " + std::strerror(errno);
  }
  ~EmptyMount() {
    if (!kind_.empty() && ::umount2(at_.c_str(), 0) != 0) ::umount2(at_.c_str(), MNT_DETACH);
  }
  EmptyMount(const EmptyMount&) = delete;
  EmptyMount& operator=(const EmptyMount&) = delete;

  bool mounted() const { return !kind_.empty(); }
  const std::string& kind() const { return kind_; }
  const std::string& why_not() const { return why_not_; }

 private:
  std::filesystem::path at_, source_;
  std::string kind_, why_not_;
};

/// One trial's directory in a layout, and what must outlive its use (a mount).
struct LayoutDir {
  std::filesystem::path dir;
  std::shared_ptr<EmptyMount> mount;
};
using Layout = std::function<LayoutDir(const std::filesystem::path& where)>;

/// `where` as an empty mount point (the caller checks mounted()).
inline LayoutDir empty_mount_point(const std::filesystem::path& where) {
  return {where, std::make_shared<EmptyMount>(where)};
}
/// `where` as a symlink to an empty directory beside it.
inline LayoutDir symlink_to_empty_dir(const std::filesystem::path& where) {
  std::filesystem::path target = where;
  target += ".target";
  std::filesystem::create_directories(target);
  std::filesystem::create_directories(where.parent_path());
  std::filesystem::create_directory_symlink(target, where);
  return {where, nullptr};
}

/// Why this process cannot mount an empty filesystem, or "" when it can.
inline std::string cannot_mount(const std::filesystem::path& scratch) {
  EmptyMount probe(scratch / "mount-probe");
  return probe.mounted() ? "" : probe.why_not();
}

/// The names in `dir`, sorted.
inline std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// A service started with `argv` and run to its end (a refusal exits at once;
/// one that starts instead is killed after 30 s): status and output.
inline Run run_to_end(const std::vector<std::string>& argv) {
  std::string command = "timeout -s KILL 30 ";
  for (const auto& a : argv) command += a + " ";
  return run(command);
}

/// Whether a store's `.creating` marker is anywhere under `dir` (a symlink followed).
inline bool holds_a_creation_marker(const std::filesystem::path& dir) {
  std::error_code ec;
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() == ".creating") return true;
  return false;
}

/// A start of a service on `dir`, made to hold other files (notes.txt and
/// photos/): it must exit 1 with a message holding `message` and leave `dir`
/// as it was.
inline void expect_other_files_refused(const std::filesystem::path& dir, const std::vector<std::string>& argv,
                                       const std::string& message) {
  std::filesystem::create_directories(dir / "photos");
  std::ofstream(dir / "notes.txt") << "not a service's";
  auto refused = run_to_end(argv);
  EXPECT_EQ(refused.status, 1) << refused.out;
  EXPECT_NE(refused.out.find(message), std::string::npos) << refused.out;
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"notes.txt", "photos"}));
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The first start of a service, SIGKILLed `kills` times at moments spread
/// over how long one first start takes here (the quickest of three, timed
/// first), each in a new directory of `layout` under `root`; after each kill
/// the service is started again on what the kill left and must say `ready`.
/// Reports the figure (with how many kills left a store's creation cut short,
/// its `.creating` marker there) and returns how many kills landed before the
/// killed start said `ready`. `where` names a trial's directory (the layout makes it);
/// `argv` is the service's command line for it.
inline int kill_during_first_start(const std::string& service, const std::filesystem::path& root,
                                   const std::function<std::filesystem::path(const std::filesystem::path& trial)>& where,
                                   const Layout& layout,
                                   const std::function<std::vector<std::string>(const std::filesystem::path&)>& argv,
                                   const std::string& ready, int kills) {
  long first_start_us = 0;
  for (int i = 0; i < 3; ++i) {
    const auto trial = root / ("timed-" + std::to_string(i));
    auto dir = layout(where(trial));
    auto start = std::chrono::steady_clock::now();
    ChildProcess child(argv(dir.dir), trial.string() + ".log");
    if (!child.wait_for_line(ready, std::chrono::seconds(60))) {
      ADD_FAILURE() << service << " did not start on an empty directory:\n" << read_text(trial.string() + ".log");
      return 0;
    }
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
    first_start_us = i == 0 ? us : std::min<long>(first_start_us, us);
  }
  std::mt19937 rng(20261203);  // fixed: the same kill points (as fractions of one first start) every run
  std::uniform_int_distribution<long> at(0, first_start_us);
  int before_ready = 0, cut_short = 0;
  for (int i = 0; i < kills; ++i) {
    const auto trial = root / ("trial-" + std::to_string(i));
    auto dir = layout(where(trial));
    {
      ChildProcess child(argv(dir.dir), (trial.string() + ".killed.log"));
      if (!child.started()) {
        ADD_FAILURE() << "cannot start " << service;
        return before_ready;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(at(rng)));  // the kill point, not a wait
      child.kill(SIGKILL);
      before_ready += !child.wait_for_line(ready, std::chrono::milliseconds(100));  // dead: EOF at once
    }
    cut_short += holds_a_creation_marker(dir.dir);
    ChildProcess again(argv(dir.dir), trial.string() + ".restart.log");
    if (!again.wait_for_line(ready, std::chrono::seconds(60))) {
      ADD_FAILURE() << service << " did not restart after kill " << i << ":\n" << read_text(trial.string() + ".restart.log");
      return before_ready;
    }
  }
  std::printf("figure: %s, %d kills during a first start (%ld us each), %d before it was ready, %d inside a store's "
              "creation; every restart came up\n",
              service.c_str(), kills, static_cast<long>(first_start_us), before_ready, cut_short);
  return before_ready;
}

}  // namespace cowboy::testing
