#include "history.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace holdfast::check {
namespace {

constexpr const char* op_names[] = {"acquire", "read", "write", "release", "queued", "lost", "renewed"};
constexpr const char* phase_names[] = {"invoke", "ok", "fail", "unknown"};
constexpr const char* access_names[] = {"exclusive", "shared"};

template <class Enum, std::size_t N>
Enum parse_enum(const std::string& word, const char* const (&names)[N], const std::string& where) {
    for (std::size_t i = 0; i < N; ++i)
        if (word == names[i]) return static_cast<Enum>(i);
    throw std::runtime_error(where + ": unknown word '" + word + "'");
}

// The message is the rest of the line: no newline may end it early.
std::string one_line(std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
}

std::string rest_of(std::istringstream& in) {
    std::string rest;
    std::getline(in >> std::ws, rest);
    return rest;
}

// Calls parse(line, "file:line") for every non-empty line of `path`.
template <class Parse>
void each_line(const std::filesystem::path& path, Parse parse) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read history " + path.string());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number)
        if (!line.empty()) parse(line, path.string() + ":" + std::to_string(number));
}

}  // namespace

std::string op_name(Op op) { return op_names[static_cast<int>(op)]; }
std::string phase_name(Phase phase) { return phase_names[static_cast<int>(phase)]; }
std::string access_name(Access access) { return access_names[static_cast<int>(access)]; }

HistoryWriter::HistoryWriter(const std::string& path)
    : path_(path), fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "cannot open history " + path);
}

HistoryWriter::~HistoryWriter() { ::close(fd_); }

void HistoryWriter::append(const std::string& line) {
    if (::write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
        throw std::system_error(errno, std::generic_category(), "cannot append to history " + path_);
}

void HistoryWriter::write(const Event& e) {
    std::ostringstream line;
    line << e.time << ' ' << e.worker << ' ' << op_name(e.op) << ' ' << phase_name(e.phase) << ' ' << e.lock << ' '
         << e.hold << ' ' << access_name(e.access) << ' ' << e.token << ' ' << e.value << ' ' << one_line(e.message) << '\n';
    append(line.str());
}

void HistoryWriter::write(const Fault& f) {
    std::ostringstream line;
    line << f.start << ' ' << f.end << ' ' << nemesis_name(f.kind) << ' ' << f.worker << ' ' << f.lock << ' '
         << one_line(f.detail) << '\n';
    append(line.str());
}

void HistoryWriter::write(const Sample& s) {
    std::ostringstream line;
    line << s.time << ' ' << s.answered << ' ' << s.port << ' ' << s.lock << ' ' << s.type << ' ' << s.pttl << ' '
         << s.free << ' ' << s.held;
    for (const std::string& field : s.fields) line << ' ' << field;
    line << '\n';
    append(line.str());
}

void HistoryWriter::write(const Heard& h) {
    std::ostringstream line;
    line << h.time << ' ' << h.port << ' ' << h.lock << ' ' << h.channel << ' ' << one_line(h.payload) << '\n';
    append(line.str());
}

void HistoryWriter::write(const SweptKey& k) {
    std::ostringstream line;
    line << k.port << ' ' << k.key << ' ' << k.type << ' ' << k.pttl << ' ' << (k.value.empty() ? "-" : k.value) << ' '
         << k.members << ' ' << k.unleased;
    for (const std::string& field : k.fields) line << ' ' << field;
    line << '\n';
    append(line.str());
}

std::vector<SweptKey> read_swept(const std::string& dir) {
    std::vector<SweptKey> keys;
    const std::filesystem::path path = std::filesystem::path(dir) / "sweep.log";
    if (!std::filesystem::exists(path)) return keys;
    each_line(path, [&keys](const std::string& line, const std::string& where) {
        std::istringstream in(line);
        SweptKey k;
        if (!(in >> k.port >> k.key >> k.type >> k.pttl >> k.value >> k.members >> k.unleased))
            throw std::runtime_error(where + ": malformed key '" + line + "'");
        for (std::string field; in >> field;) k.fields.push_back(field);
        keys.push_back(std::move(k));
    });
    return keys;
}

int lock_of_channel(const std::string& channel) {
    const std::string tag = "{" + lock_name(0).substr(0, lock_name(0).size() - 1);  // "{check:lock:"
    const auto at = channel.find(tag);
    if (at == std::string::npos) return -1;
    try {
        return std::stoi(channel.substr(at + tag.size()));
    } catch (const std::exception&) {
        return -1;
    }
}

std::vector<Heard> read_heard(const std::string& dir) {
    std::vector<Heard> heard;
    const std::filesystem::path path = std::filesystem::path(dir) / "unlocks.log";
    if (!std::filesystem::exists(path)) return heard;
    each_line(path, [&heard](const std::string& line, const std::string& where) {
        std::istringstream in(line);
        Heard h;
        if (!(in >> h.time >> h.port >> h.lock >> h.channel))
            throw std::runtime_error(where + ": malformed message '" + line + "'");
        h.payload = rest_of(in);
        heard.push_back(std::move(h));
    });
    std::stable_sort(heard.begin(), heard.end(), [](const Heard& a, const Heard& b) { return a.time < b.time; });
    return heard;
}

std::vector<Event> read_events(const std::string& dir) {
    std::vector<Event> events;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string file = entry.path().filename().string();
        if (!file.starts_with("worker-") || !file.ends_with(".log")) continue;
        each_line(entry.path(), [&events](const std::string& line, const std::string& where) {
            std::istringstream in(line);
            Event e;
            std::string op, phase, access;
            if (!(in >> e.time >> e.worker >> op >> phase >> e.lock >> e.hold >> access >> e.token >> e.value))
                throw std::runtime_error(where + ": malformed event '" + line + "'");
            e.op = parse_enum<Op>(op, op_names, where);
            e.phase = parse_enum<Phase>(phase, phase_names, where);
            e.access = parse_enum<Access>(access, access_names, where);
            e.message = rest_of(in);
            events.push_back(std::move(e));
        });
    }
    std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.time < b.time; });
    return events;
}

std::vector<Fault> read_faults(const std::string& dir) {
    std::vector<Fault> faults;
    const std::filesystem::path path = std::filesystem::path(dir) / "nemesis.log";
    if (!std::filesystem::exists(path)) return faults;
    each_line(path, [&faults](const std::string& line, const std::string& where) {
        std::istringstream in(line);
        Fault f;
        std::string kind;
        if (!(in >> f.start >> f.end >> kind >> f.worker >> f.lock))
            throw std::runtime_error(where + ": malformed fault '" + line + "'");
        f.kind = parse_nemesis(kind);
        f.detail = rest_of(in);
        faults.push_back(std::move(f));
    });
    std::stable_sort(faults.begin(), faults.end(), [](const Fault& a, const Fault& b) { return a.start < b.start; });
    return faults;
}

std::vector<Sample> read_samples(const std::string& dir) {
    std::vector<Sample> samples;
    const std::filesystem::path path = std::filesystem::path(dir) / "witness.log";
    if (!std::filesystem::exists(path)) return samples;
    each_line(path, [&samples](const std::string& line, const std::string& where) {
        std::istringstream in(line);
        Sample s;
        if (!(in >> s.time >> s.answered >> s.port >> s.lock >> s.type >> s.pttl >> s.free >> s.held))
            throw std::runtime_error(where + ": malformed sample '" + line + "'");
        for (std::string field; in >> field;) s.fields.push_back(field);
        samples.push_back(std::move(s));
    });
    std::stable_sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.time < b.time; });
    return samples;
}

}  // namespace holdfast::check
