#include "side_by_side/harness.hpp"

#include "bench_support.hpp"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <iostream>
#include <optional>

namespace cudacore::bench::side_by_side {

void emit(const json& line) { std::cout << line.dump() << std::endl; }

void emit_skipped(const std::string& operation, const std::string& system, const std::string& why) {
    emit({{"operation", operation}, {"system", system}, {"skipped", why}});
}

bool Runner::wanted(const std::string& operation) const {
    return only_.empty() || only_.contains(operation);
}

void Runner::compare(const std::string& operation, Plan plan, std::vector<Side> sides) {
    if (!wanted(operation)) return;
    if (quick_) plan = {std::min(plan.warmup, 1), std::max(3, plan.repetitions / 20)};
    std::vector<std::vector<double>> samples(sides.size());
    std::vector<std::optional<std::string>> failures(sides.size());
    auto run = [&](std::size_t index) {
        if (failures[index] || !sides[index].repetition) return;
        try {
            const double ns = sides[index].repetition();
            samples[index].push_back(ns);
        } catch (const std::exception& error) {
            failures[index] = error.what();
        }
    };
    for (int i = 0; i < plan.warmup; ++i)
        for (std::size_t s = 0; s < sides.size(); ++s) run(s);
    for (auto& side_samples : samples) side_samples.clear();
    for (int i = 0; i < plan.repetitions; ++i) {
        for (std::size_t k = 0; k < sides.size(); ++k)
            run(i % 2 == 0 ? k : sides.size() - 1 - k);
    }
    for (std::size_t s = 0; s < sides.size(); ++s) {
        if (!sides[s].repetition) continue;
        if (failures[s]) {
            emit_skipped(operation, sides[s].system, *failures[s]);
            continue;
        }
        json line = {{"operation", operation},
                     {"system", sides[s].system},
                     {"median_ns", median(samples[s])},
                     {"repetitions", samples[s].size()}};
        if (!sides[s].note.empty()) line["note"] = sides[s].note;
        emit(line);
    }
}

void Runner::skip(const std::string& operation, const std::vector<std::string>& systems,
                  const std::string& why) {
    if (!wanted(operation)) return;
    for (const auto& system : systems) emit_skipped(operation, system, why);
}

}  // namespace cudacore::bench::side_by_side
