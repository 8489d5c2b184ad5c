#include "common/data_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"

namespace cowboy::data_dir {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCreating = ".creating";
constexpr std::string_view kLostFound = "lost+found";
// write_file's temporaries: one a crash left is the service's own, never a foreign file.
constexpr std::string_view kPartial = ".partial.";
constexpr std::size_t kNamesShown = 5;

bool fsync_path(const fs::path& path, bool directory) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0) return false;
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

bool sync_directory(const fs::path& dir) { return fsync_path(dir, true); }

namespace {

fs::path parent_of(const fs::path& path) {
  auto whole = fs::absolute(path).lexically_normal();
  if (!whole.has_filename()) whole = whole.parent_path();  // "dir/"
  return whole.has_relative_path() ? whole.parent_path() : whole;
}

bool ignored(const fs::directory_entry& entry) {
  std::error_code ec;
  return (entry.path().filename() == kLostFound && entry.is_directory(ec)) ||
         entry.path().filename().string().starts_with(kPartial);
}

// `dir` as a directory: made (and its parent synced) when absent; a symlink is
// followed, so it must lead to a directory.
Result<Unit, std::string> ensure_directory(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return Unit{};
  if (fs::is_symlink(dir, ec)) return Err{dir.string() + " is a symlink to " + fs::read_symlink(dir, ec).string() +
                                          ", which is not a directory"};
  if (fs::exists(dir, ec)) return Err{dir.string() + " is not a directory"};
  fs::create_directories(dir, ec);
  if (ec) return Err{"cannot create " + dir.string() + ": " + ec.message()};
  if (!fsync_path(parent_of(dir), true)) return Err{"cannot sync the directory above " + dir.string()};
  return Unit{};
}

// The names in `dir`, sorted, but lost+found and write_file's temporaries.
Result<std::vector<std::string>, std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (!ignored(*it)) names.push_back(it->path().filename().string());
  if (ec) return Err{"cannot read " + dir.string() + ": " + ec.message()};
  std::sort(names.begin(), names.end());
  return names;
}

bool holds_any(const std::vector<std::string>& names, const std::vector<std::string>& marks) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return std::find(marks.begin(), marks.end(), n) != marks.end(); });
}

std::string refusal(const fs::path& dir, const Owner& owner, const std::vector<std::string>& names) {
  std::string found;
  for (std::size_t i = 0; i < names.size() && i < kNamesShown; ++i) found += (i ? ", " : "") + names[i];
  if (names.size() > kNamesShown) found += " and " + std::to_string(names.size() - kNamesShown) + " more";
  return "refusing " + dir.string() + ": it is not empty (" + found + ") and is not a " + owner.what +
         "; a new one needs an empty directory";
}

// Everything in `dir` but lost+found: what a creation cut short left. The
// marker goes last, so that a crash while clearing leaves it to find again.
Result<Unit, std::string> clear(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != kLostFound && it->path().filename() != kCreating) doomed.push_back(it->path());
  for (const auto& path : doomed)
    if (!ec) fs::remove_all(path, ec);
  if (!ec && fsync_path(dir, true)) fs::remove(dir / kCreating, ec);
  if (ec || !fsync_path(dir, true)) return Err{"cannot clear " + dir.string() + (ec ? ": " + ec.message() : "")};
  return Unit{};
}

// An empty file needs no temporary, and its existence is made durable by
// syncing the directory that names it.
bool make_fence(const fs::path& fence) {
  int fd = ::open(fence.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  ::close(fd);
  return fsync_path(fence.parent_path(), true);
}

Result<Unit, std::string> build_fenced(const fs::path& dir, const Owner& owner, const Build& build) {
  const fs::path fence = dir / kCreating;
  if (!make_fence(fence)) return Err{"cannot write " + fence.string()};
  auto built = build(dir);
  if (!built) {
    (void)clear(dir);  // the directory is left as it was found (the next start clears it otherwise)
    return Err{built.error()};
  }
  // The store's names are durable before the marker goes, and the marker's
  // removal before the service writes anything: a marker back after a crash
  // would have the next start clear acknowledged writes.
  if (!fsync_path(dir, true)) return Err{"cannot sync the new " + owner.what + " in " + dir.string()};
  std::error_code ec;
  fs::remove(fence, ec);
  if (ec || !fsync_path(dir, true)) return Err{"cannot publish the new " + owner.what + " in " + dir.string()};
  return Unit{};
}

}  // namespace

Result<Unit, std::string> take(const fs::path& dir, const Owner& owner) {
  if (auto made = ensure_directory(dir); !made) return Err{made.error()};
  auto names = entries(dir);
  if (!names) return Err{names.error()};
  if (names->empty() || holds_any(*names, owner.marks)) return Unit{};
  return Err{refusal(dir, owner, *names)};
}

Result<bool, std::string> create_store(const fs::path& dir, const Owner& owner, const Build& build) {
  if (auto made = ensure_directory(dir); !made) return Err{made.error()};
  auto names = entries(dir);
  if (!names) return Err{names.error()};
  if (std::find(names->begin(), names->end(), kCreating) != names->end()) {
    log::warn("creation_cut_short", log::field("path", dir.string()), log::field("what", owner.what));
    if (auto cleared = clear(dir); !cleared) return Err{cleared.error()};
    names->clear();
  }
  if (!names->empty()) {
    if (holds_any(*names, owner.marks)) return false;
    return Err{refusal(dir, owner, *names)};
  }
  if (auto built = build_fenced(dir, owner, build); !built) return Err{built.error()};
  return true;
}

Result<bool, std::string> write_file(const fs::path& path, std::string_view content, mode_t mode, IfExists if_exists) {
  std::error_code ec;
  if (if_exists == IfExists::kKeep && fs::exists(path, ec)) return false;
  const fs::path dir = parent_of(path);
  std::string temporary = (dir / (std::string(kPartial) + path.filename().string() + ".XXXXXX")).string();
  int fd = ::mkstemp(temporary.data());
  if (fd < 0) return Err{"cannot write " + path.string() + ": " + std::strerror(errno)};
  int error = 0;
  auto failed = [&error] { return error = errno, false; };
  bool ok = ::fchmod(fd, mode) == 0 || failed();
  for (std::size_t done = 0; ok && done < content.size();) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    ok = n > 0 || failed();
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ok && (::fsync(fd) == 0 || failed());
  ::close(fd);
  if (ok && if_exists == IfExists::kKeep)  // link() fails on an existing name, where rename() replaces it
    ok = ::link(temporary.c_str(), path.c_str()) == 0 || failed();
  else if (ok)
    ok = ::rename(temporary.c_str(), path.c_str()) == 0 || failed();
  if (!ok || if_exists == IfExists::kKeep) ::unlink(temporary.c_str());
  if (!ok && error == EEXIST && if_exists == IfExists::kKeep) return false;  // another process made it first
  if (!ok) return Err{"cannot write " + path.string() + ": " + std::strerror(error)};
  if (!fsync_path(dir, true)) return Err{"cannot sync the directory of " + path.string()};
  return true;
}

}  // namespace cowboy::data_dir
