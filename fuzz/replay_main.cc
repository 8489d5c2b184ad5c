// A main() for the fuzz targets in the ordinary (GCC) build, so that ctest
// exercises every decoder briefly: each seed file as is, then a fixed number
// of mutated seeds and random inputs from a fixed PRNG seed, so that a
// failure reproduces. No coverage guidance: scripts/run-fuzz.sh (libFuzzer,
// clang, sanitizers) is the deep run.
//
//   fuzz_<name> [--runs N] [--seed S] <corpus dir or file>...
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

using Input = std::vector<std::uint8_t>;
constexpr std::size_t kMaxLen = 4'096;  // as run-fuzz.sh's -max_len

Input read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Input(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void mutate(Input& in, std::mt19937_64& rng) {
  static constexpr std::uint8_t kInteresting[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  for (std::size_t edits = 1 + pick(8); edits > 0; --edits) {
    switch (pick(6)) {
      case 0:
        if (!in.empty()) in[pick(in.size())] ^= static_cast<std::uint8_t>(1u << pick(8));
        break;
      case 1:
        if (!in.empty()) in[pick(in.size())] = kInteresting[pick(std::size(kInteresting))];
        break;
      case 2:
        if (in.size() < kMaxLen) in.insert(in.begin() + static_cast<std::ptrdiff_t>(pick(in.size() + 1)),
                                           static_cast<std::uint8_t>(rng()));
        break;
      case 3:
        if (!in.empty()) in.erase(in.begin() + static_cast<std::ptrdiff_t>(pick(in.size())));
        break;
      case 4:
        if (!in.empty()) in.resize(pick(in.size()));
        break;
      default:  // a run of one byte, as a length or count field would hold
        if (!in.empty()) {
          std::size_t at = pick(in.size()), n = std::min<std::size_t>(1 + pick(4), in.size() - at);
          std::uint8_t v = kInteresting[pick(std::size(kInteresting))];
          for (std::size_t i = 0; i < n; ++i) in[at + i] = v;
        }
        break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t runs = 10'000, seed = 1;
  std::vector<Input> corpus;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg))
        if (entry.is_regular_file()) corpus.push_back(read_file(entry.path()));
    } else if (std::filesystem::exists(arg)) {
      corpus.push_back(read_file(arg));
    } else {
      std::fprintf(stderr, "no such seed file or directory: %s\n", arg.c_str());
      return 2;
    }
  }
  for (const auto& in : corpus) LLVMFuzzerTestOneInput(in.data(), in.size());
  std::mt19937_64 rng(seed);
  for (std::uint64_t run = 0; run < runs; ++run) {
    Input in;
    if (!corpus.empty() && run % 4 != 0) {
      in = corpus[rng() % corpus.size()];
    } else {  // random bytes, for the targets with no seed and the paths no seed reaches
      in.resize(rng() % 257);
      for (auto& b : in) b = static_cast<std::uint8_t>(rng());
    }
    mutate(in, rng);
    LLVMFuzzerTestOneInput(in.data(), in.size());
  }
  std::printf("%zu seeds and %llu generated inputs, no failure\n", corpus.size(), static_cast<unsigned long long>(runs));
  return 0;
}
