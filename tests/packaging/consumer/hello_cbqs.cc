// Appends one record to a cbqsd --dev instance and reads it back, with only
// the installed SDK: <cbqs/client.h> and libcbqs.
#include <cbqs/client.h>

#include <cstdio>

using namespace cowboy::cbqs;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: hello_cbqs CBQSD_DEV_DIR\n");
    return 2;
  }
  auto options = sdk::ClientOptions::from_dev_dir(argv[1]);
  if (!options) return std::fprintf(stderr, "%s\n", options.error().describe().c_str()), 1;
  auto client = sdk::Client::connect(*options);
  if (!client) return std::fprintf(stderr, "%s\n", client.error().describe().c_str()), 1;
  auto lane = (*client)->create_lane();
  if (!lane) return std::fprintf(stderr, "%s\n", lane.error().describe().c_str()), 1;
  auto sequence = (*client)->append(*lane, {'h', 'e', 'l', 'l', 'o'}).get();
  if (!sequence) return std::fprintf(stderr, "%s\n", sequence.error().describe().c_str()), 1;
  auto reader = (*client)->read({.lanes = LaneScopeExact{*lane}, .start = StartAt{*sequence}});
  if (!reader) return std::fprintf(stderr, "%s\n", reader.error().describe().c_str()), 1;
  auto record = (*reader)->next(std::chrono::seconds(10));
  if (!record || !*record) return std::fprintf(stderr, "the record did not come back\n"), 1;
  std::printf("appended #%llu to lane %llu, read back \"%.*s\"\n", static_cast<unsigned long long>(sequence->value),
              static_cast<unsigned long long>(lane->value), static_cast<int>((*record)->payload.size()),
              reinterpret_cast<const char*>((*record)->payload.data()));
  return 0;
}
