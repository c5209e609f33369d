// Reads what the tests' NVTX tool (tests/helpers/nvtx_recorder.cpp) wrote, and rebuilds the
// nesting: each push and mark gets the path of the ranges open around it, on its thread, in its
// domain ("outer > inner > itself").
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace cudacore::test {

struct NvtxEvent {
    std::string kind;  // push or mark
    std::string thread;
    std::string domain;
    std::string message_type;  // ascii or registered
    std::string message;
    std::uint32_t category = 0;
    std::string color;    // none or AARRGGBB
    std::string payload;  // none, i64:N, u64:N, f64:X
    std::string path;     // the messages of the ranges around it and its own, joined by " > "
};

struct NvtxRecord {
    std::vector<std::string> domains;                                // in creation order
    std::map<std::pair<std::string, std::uint32_t>, std::string> categories;  // (domain, id)
    std::vector<std::pair<std::string, std::string>> strings;       // (domain, text) registered
    std::vector<NvtxEvent> events;                                  // pushes and marks, in order
    int pops = 0;
    int unmatched_pops = 0;  // a pop with no range open on its thread in its domain
    int left_open = 0;       // ranges never popped

    // The events with this kind and message, in order.
    std::vector<NvtxEvent> find(const std::string& kind, const std::string& message) const {
        std::vector<NvtxEvent> found;
        for (const auto& event : events)
            if (event.kind == kind && event.message == message) found.push_back(event);
        return found;
    }
    // The events of this kind whose message starts with `prefix`.
    std::vector<NvtxEvent> find_prefix(const std::string& kind, const std::string& prefix) const {
        std::vector<NvtxEvent> found;
        for (const auto& event : events)
            if (event.kind == kind && event.message.rfind(prefix, 0) == 0) found.push_back(event);
        return found;
    }
};

inline std::vector<std::string> split_tabs(const std::string& line) {
    std::vector<std::string> fields;
    std::string field;
    std::istringstream in(line);
    while (std::getline(in, field, '\t')) fields.push_back(field);
    if (!line.empty() && line.back() == '\t') fields.emplace_back();
    return fields;
}

inline NvtxRecord read_nvtx_record(const std::filesystem::path& path) {
    NvtxRecord record;
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> open;  // (thread, domain)
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        const std::vector<std::string> f = split_tabs(line);
        if (f.empty()) continue;
        if (f[0] == "domain" && f.size() == 2) {
            record.domains.push_back(f[1]);
        } else if (f[0] == "category" && f.size() == 4) {
            record.categories[{f[1], static_cast<std::uint32_t>(std::stoul(f[2]))}] = f[3];
        } else if (f[0] == "string" && f.size() == 3) {
            record.strings.emplace_back(f[1], f[2]);
        } else if ((f[0] == "push" || f[0] == "mark") && f.size() == 8) {
            NvtxEvent event{f[0], f[1], f[2], f[3], f[4],
                            static_cast<std::uint32_t>(std::stoul(f[5])), f[6], f[7], ""};
            std::vector<std::string>& stack = open[{event.thread, event.domain}];
            for (const auto& outer : stack) event.path += outer + " > ";
            event.path += event.message;
            if (event.kind == "push") stack.push_back(event.message);
            record.events.push_back(std::move(event));
        } else if (f[0] == "pop" && f.size() == 3) {
            ++record.pops;
            std::vector<std::string>& stack = open[{f[1], f[2]}];
            if (stack.empty())
                ++record.unmatched_pops;
            else
                stack.pop_back();
        }
    }
    for (const auto& [key, stack] : open) record.left_open += static_cast<int>(stack.size());
    return record;
}

}  // namespace cudacore::test
