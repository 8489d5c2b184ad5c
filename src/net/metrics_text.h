// Writing the Prometheus text format: a series with its HELP and TYPE, a
// labelled sample, a cumulative latency histogram. One writer for the
// services' /metrics (cbqsd, transitd, cip11-runner); prometheus_text.h reads it back.
#pragma once

#include <sstream>
#include <string>

#include "common/histogram.h"

namespace cowboy::net {

class MetricsText {
 public:
  MetricsText() { out_.precision(15); }
  void head(const char* name, const char* type, const char* help) {
    out_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  }
  template <typename V> void sample(const char* name, V value, const std::string& labels = "") {
    out_ << name << labels << ' ' << value << '\n';
  }
  template <typename V> void series(const char* name, const char* type, const char* help, V value) {
    head(name, type, help);
    sample(name, value);
  }
  void histogram(const std::string& name, const char* help, const LatencyHistogram& h) {
    head(name.c_str(), "histogram", help);
    for (std::size_t i = 0; i < LatencyHistogram::kBoundsSeconds.size(); ++i)
      out_ << name << "_bucket{le=\"" << LatencyHistogram::kBoundsSeconds[i] << "\"} " << h.cumulative(i) << '\n';
    out_ << name << "_bucket{le=\"+Inf\"} " << h.count() << '\n'
         << name << "_sum " << h.sum_seconds() << '\n'
         << name << "_count " << h.count() << '\n';
  }
  /// Text already in the format (process_metrics_text()).
  void raw(const std::string& text) { out_ << text; }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

}  // namespace cowboy::net
