#include "lock/layout.hpp"

namespace holdfast::detail {

std::vector<LockField> lock_fields(const std::vector<Reply>& hgetall, bool read_write) {
    std::vector<LockField> fields;
    for (std::size_t i = 0; i + 1 < hgetall.size(); i += 2) {
        LockField field{LockField::Role::holder, hgetall[i].str, hgetall[i + 1].str, hgetall[i].str};
        if (read_write && field.name == mode_field) {
            field.role = LockField::Role::mode;
            field.owner.clear();
        } else if (read_write && field.name.ends_with(writer_suffix)) {
            field.role = LockField::Role::writer;
            field.owner.resize(field.owner.size() - writer_suffix.size());
        }
        fields.push_back(std::move(field));
    }
    return fields;
}

bool has_mode(const std::vector<Reply>& hgetall) {
    for (std::size_t i = 0; i + 1 < hgetall.size(); i += 2)
        if (hgetall[i].str == mode_field) return true;
    return false;
}

}  // namespace holdfast::detail
