// The directories the services keep their state in, and the one rule they all
// follow there (docs/operations.md, "Data directories").
//
// A directory is taken when it is absent (it is made), empty, or already holds
// the service's own files (one of its `marks`). An empty mount point and a
// symlink to an empty directory are empty directories like any other, and a
// `lost+found` directory is ignored (mkfs.ext4 makes one on every volume).
// Anything else is refused with a message naming the path and what it holds:
// a service never writes among files it does not know.
//
// A new store is built inside its directory, never beside it and renamed into
// place: a rename onto a mount point or a symlink, or across filesystems,
// fails. The building is fenced by a marker, `.creating`:
//   1. `.creating` is made, and the directory synced, before anything else is
//      written;
//   2. the store is built in the directory, durably (a RocksDB store after its
//      first synced write: RocksDB syncs its WAL, MANIFEST and CURRENT);
//   3. the directory is synced;
//   4. `.creating` is removed, and the directory synced again, before the
//      service writes anything to the store.
// A crash at any moment leaves either no store, a whole store, or the marker;
// a start that finds the marker clears the directory (all but lost+found) and
// builds again, so a half-made store is never opened or refused.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"

namespace cowboy::data_dir {

/// Whose directory it is: the name messages give it, and the top-level
/// entries that only this service makes (one of them marks it as the service's).
struct Owner {
  std::string what;
  std::vector<std::string> marks;
};

/// Takes `dir` for a service that keeps files in it, each made crash-safe on
/// its own (write_file below, create_store for its stores).
Result<Unit, std::string> take(const std::filesystem::path& dir, const Owner& owner);

/// Writes a whole new store into the (empty) directory it is given and
/// returns once its contents are durable (create_store syncs the directory).
using Build = std::function<Result<Unit, std::string>(const std::filesystem::path& dir)>;

/// Takes `dir` for a store, building it with `build` when the directory holds
/// none (steps 1-4 above). True when it built one; false when `dir` already
/// held the owner's store (the caller still checks what is inside). A failed
/// build leaves the directory empty again.
Result<bool, std::string> create_store(const std::filesystem::path& dir, const Owner& owner, const Build& build);

/// fsync of the directory itself, so the names made or removed in it are durable.
bool sync_directory(const std::filesystem::path& dir);

enum class IfExists : bool { kReplace, kKeep };

/// `content` at `path`, whole or not at all: written to a temporary beside
/// it, synced, then moved into place and the directory synced. kKeep never
/// replaces an existing file (two processes creating one key agree on it).
/// True when it wrote the file; false when kKeep found one there.
Result<bool, std::string> write_file(const std::filesystem::path& path, std::string_view content, mode_t mode,
                                     IfExists if_exists);

}  // namespace cowboy::data_dir
