// Reading a lock's hash back (lock/layout.hpp) and each kind's holders in it,
// from HGETALL replies as the server sends them. No server.
#include "lock/layout.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "holdfast/errors.hpp"
#include "lock/kind.hpp"
#include "rwlock/kind.hpp"
#include "string_replies.hpp"

namespace holdfast::detail {
namespace {

using Role = LockField::Role;

// HGETALL's flat reply: field, value, field, value...
std::vector<Reply> hgetall(const std::vector<std::string>& flat) { return holdfast::testing::string_replies(flat); }

using Owners = std::vector<std::pair<std::string, std::int64_t>>;

Owners owners(const std::vector<Lock::Holder>& holders) {
    Owners result;
    for (const auto& h : holders) result.emplace_back(h.owner, h.hold_count);
    return result;
}

TEST(LockHashFields, AnRLocksFieldsAreAllHoldersWhateverTheyAreCalled) {
    const auto fields = lock_fields(hgetall({"a:1", "2", "mode", "read", "b:write", "1"}), false);
    ASSERT_EQ(fields.size(), 3u);
    for (const auto& field : fields) {
        EXPECT_EQ(field.role, Role::holder) << field.name;
        EXPECT_EQ(field.owner, field.name);
    }
    EXPECT_EQ(fields[0].value, "2");
}

TEST(LockHashFields, AReadWriteLocksModeWriterAndReadersAreToldApart) {
    const auto reply = hgetall({"mode", "write", "a:1:write", "1", "a:1", "2", "b:7", "1"});
    EXPECT_TRUE(has_mode(reply));
    const auto fields = lock_fields(reply, true);
    ASSERT_EQ(fields.size(), 4u);
    EXPECT_EQ(fields[0].role, Role::mode);
    EXPECT_EQ(fields[0].value, "write");
    EXPECT_EQ(fields[1].role, Role::writer);
    EXPECT_EQ(fields[1].owner, "a:1");
    EXPECT_EQ(fields[1].name, writer_field("a:1"));
    EXPECT_EQ(fields[2].role, Role::holder);
    EXPECT_EQ(fields[2].owner, "a:1");
    EXPECT_EQ(fields[3].owner, "b:7");
}

TEST(LockHashFields, OnlyAHashWithAModeIsAReadWriteLocks) {
    EXPECT_FALSE(has_mode(hgetall({"a:1", "1"})));
    EXPECT_FALSE(has_mode(hgetall({})));
    EXPECT_FALSE(has_mode(hgetall({"a", "mode"})));  // a value, not a field
}

TEST(LockHashFields, EachKindCountsItsOwnFields) {
    const auto reply = hgetall({"mode", "write", "a:1:write", "1", "a:1", "2", "b:7", "3"});
    EXPECT_EQ(owners(write_lock_kind().holders_in(reply, "", "rw")), (Owners{{"a:1", 1}}));
    EXPECT_EQ(owners(read_lock_kind().holders_in(reply, "", "rw")), (Owners{{"a:1", 2}, {"b:7", 3}}));
    const auto plain = hgetall({"a:1", "2", "b:7", "1"});
    EXPECT_EQ(owners(reentrant_lock_kind().holders_in(plain, "", "lock")), (Owners{{"a:1", 2}, {"b:7", 1}}));
}

// A value that is no hold count makes the hash no lock, for a kind whose
// field it is; the other side of a read-write lock does not read it.
TEST(LockHashFields, AFieldThatIsNoHoldCountIsAWrongType) {
    const auto reply = hgetall({"mode", "read", "a:1", "many", "b:7:write", "1"});
    EXPECT_THROW(read_lock_kind().holders_in(reply, "127.0.0.1:1", "rw"), WrongTypeError);
    EXPECT_EQ(owners(write_lock_kind().holders_in(reply, "", "rw")), (Owners{{"b:7", 1}}));
    // An RLock's kind reads a read-write lock's mode as a holder's field.
    EXPECT_THROW(reentrant_lock_kind().holders_in(reply, "", "rw"), WrongTypeError);
}

}  // namespace
}  // namespace holdfast::detail
