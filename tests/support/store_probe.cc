// Opens (creating on first use) a cbqsd RocksDB store and says so: the child
// that the first-start kill test kills at random moments.
#include <cstdio>

#include "cbqs/store/store.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: cbqs_store_probe PATH\n");
    return 2;
  }
  auto store = cowboy::cbqs::store::open_rocksdb_store(argv[1]);
  if (!store) {
    std::printf("refused: %s\n", store.error().c_str());
    return 1;
  }
  std::printf("open\n");
  std::fflush(stdout);
  return 0;
}
