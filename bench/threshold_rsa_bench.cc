// Threshold RSA (common/threshold_rsa.h): dealing time and per-operation CPU.
//   build/bin/threshold_rsa_bench [dealings] [runs] [modulus_bits]   (defaults 5 200 2048)
// Deals `dealings` 3-of-4 keys and prints each one's wall and CPU seconds; then,
// on the first key, times `runs` of each operation (share + proof, share verify,
// combine of 3 shares with their proofs, verify) in thread CPU microseconds and
// prints the median, minimum and maximum. Every message is distinct.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/threshold_rsa.h"

namespace tr = cowboy::crypto::threshold_rsa;

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void report(const char* name, std::vector<double> micros) {
  std::sort(micros.begin(), micros.end());
  const double median = micros.size() % 2 == 1 ? micros[micros.size() / 2]
                                                : (micros[micros.size() / 2 - 1] + micros[micros.size() / 2]) / 2;
  std::printf("%-14s runs=%zu median_us=%.0f min_us=%.0f max_us=%.0f\n", name, micros.size(), median, micros.front(),
              micros.back());
}

cowboy::Bytes message_of(int i) {
  const std::string text = "threshold-rsa-bench/" + std::to_string(i);
  return cowboy::Bytes(text.begin(), text.end());
}

}  // namespace

int main(int argc, char** argv) {
  const int dealings = argc > 1 ? std::atoi(argv[1]) : 5;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 200;
  const std::size_t bits = argc > 3 ? static_cast<std::size_t>(std::atoi(argv[3])) : tr::kModulusBits;
  if (dealings < 1 || runs < 1) return 2;

  std::vector<tr::Dealing> dealt;
  for (int i = 0; i < dealings; ++i) {
    const auto wall = std::chrono::steady_clock::now();
    const double cpu = cpu_seconds();
    auto dealing = tr::deal(3, 4, bits);
    const double cpu_s = cpu_seconds() - cpu;
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    if (!dealing) {
      std::fprintf(stderr, "deal: %s\n", std::string(tr::to_string(dealing.error())).c_str());
      return 1;
    }
    std::printf("deal %d: bits=%zu wall_s=%.2f cpu_s=%.2f\n", i + 1, bits, wall_s, cpu_s);
    std::fflush(stdout);
    dealt.push_back(std::move(*dealing));
  }
  const tr::PublicKey& key = dealt.front().public_key;
  const auto& secrets = dealt.front().shares;

  std::vector<double> share_us, verify_share_us, combine_us, verify_us;
  for (int i = 0; i < runs; ++i) {
    const cowboy::Bytes message = message_of(i);
    std::vector<tr::SignatureShare> shares;
    for (int j = 0; j < 3; ++j) {
      const double t = cpu_seconds();
      auto share = tr::sign_share(key, secrets[static_cast<std::size_t>(j)], message);
      if (j == 0) share_us.push_back((cpu_seconds() - t) * 1e6);
      if (!share) return 1;
      shares.push_back(std::move(*share));
    }
    double t = cpu_seconds();
    if (!tr::verify_share(key, message, shares.front())) return 1;
    verify_share_us.push_back((cpu_seconds() - t) * 1e6);
    t = cpu_seconds();
    auto signature = tr::combine(key, message, shares);
    combine_us.push_back((cpu_seconds() - t) * 1e6);
    if (!signature) return 1;
    t = cpu_seconds();
    if (!tr::verify(key, message, *signature)) return 1;
    verify_us.push_back((cpu_seconds() - t) * 1e6);
  }
  std::printf("n=4 k=3 bits=%zu\n", bits);
  report("share+proof", share_us);
  report("share_verify", verify_share_us);
  report("combine(3)", combine_us);
  report("verify", verify_us);
  return 0;
}
