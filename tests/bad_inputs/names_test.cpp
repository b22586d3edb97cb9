// Bad-input catalog, lock names: empty, huge, binary, and with braces.
// Each either works exactly like an ordinary name or is refused clearly,
// and leaves nothing behind.
#include "bad_inputs/bad_inputs.hpp"

namespace holdfast::testing {
namespace {

using Names = BadInputs;

TEST_F(Names, EmptyNameIsRefusedBeforeAnythingIsSent) {
    Client client(config());
    raw->command({"CONFIG", "RESETSTAT"});
    const auto what = error_of<std::invalid_argument>([&] { Lock(client, ""); });
    EXPECT_TRUE(mentions(what, {"lock name must not be empty"}));
    EXPECT_EQ(script_calls(), 0);
    expect_nothing_left(client);
}

TEST_F(Names, HugeNameWorksLikeAnyOther) {
    const std::string name(1 << 20, 'n');
    expect_shared(name, "redisson_lock__channel:{" + name + "}");
}

// A 1 MiB name must not make a 1 MiB error message: it is shortened, with its size.
TEST_F(Names, HugeNameIsShortenedInErrors) {
    Client client(config());
    const std::string name = "orders:" + std::string(1 << 20, 'n');
    Lock lock(client, name);
    const auto what = error_of<NotOwnerError>([&] { lock.release(); });
    EXPECT_LT(what.size(), 1024u) << what.substr(0, 300);
    EXPECT_TRUE(mentions(what, {"'orders:nnnn", std::to_string(name.size()) + " bytes", client.current_owner()}));

    raw->command({"SET", name, "x"});
    const auto wrong = error_of<WrongTypeError>([&] { lock.try_lock(); });
    EXPECT_LT(wrong.size(), 1024u) << wrong.substr(0, 300);
    EXPECT_TRUE(mentions(wrong, {"'orders:nnnn", "a string", server_name()}));
    raw->command({"DEL", name});
    expect_nothing_left(client);
}

// NUL bytes are part of the name: "a\0b" is neither "a" nor "a\0c".
TEST_F(Names, NulBytesAreKeptInTheName) {
    const std::string name("a\0b", 3), other("a\0c", 3);
    expect_shared(name, "redisson_lock__channel:{" + name + "}");

    Client client(config());
    Lock lock(client, name), prefix(client, "a"), sibling(client, other);
    lock.lock();
    EXPECT_EQ(raw->integer({"EXISTS", name}), 1);
    EXPECT_EQ(raw->integer({"EXISTS", "a"}), 0);
    EXPECT_FALSE(prefix.is_locked());
    EXPECT_FALSE(sibling.is_locked());
    lock.unlock();
    expect_nothing_left(client);
}

TEST_F(Names, InvalidUtf8WorksAndIsEscapedInErrors) {
    const std::string name = "bad\xff\xfe";
    expect_shared(name, "redisson_lock__channel:{" + name + "}");

    Client client(config());
    Lock lock(client, name + std::string("\0\n", 2));
    const auto what = error_of<NotOwnerError>([&] { lock.release(); });
    // Printable: the bytes that would garble a terminal or a log are escaped.
    EXPECT_TRUE(mentions(what, {"'bad\\xff\\xfe\\x00\\n'"}));
    EXPECT_EQ(what.find_first_of(std::string("\xff\0\n", 3)), std::string::npos) << what;
    expect_nothing_left(client);
}

// Valid UTF-8 is left as it is: only what cannot be printed is escaped.
TEST_F(Names, Utf8NamesAreNotEscaped) {
    const std::string name = "заказ-№42";
    expect_shared(name, "redisson_lock__channel:{" + name + "}");
    Client client(config());
    Lock lock(client, name);
    EXPECT_TRUE(mentions(error_of<NotOwnerError>([&] { lock.release(); }), {"'" + name + "'"}));
}

// A name with a brace is its own hash tag: Redisson then drops the braces it
// would add around it, and the channel is `prefix:name`.
class BracedNames : public BadInputs, public ::testing::WithParamInterface<const char*> {};

TEST_P(BracedNames, UseTheLayoutsChannelAndWakeWaiters) {
    const std::string name = GetParam();
    const bool has_open = name.find('{') != std::string::npos;
    expect_shared(name, has_open ? "redisson_lock__channel:" + name : "redisson_lock__channel:{" + name + "}");
}

INSTANTIATE_TEST_SUITE_P(BadInputs, BracedNames, ::testing::Values("{", "}", "{}", "a{b}c"),
                         [](const auto& info) { return "name" + std::to_string(info.index); });

}  // namespace
}  // namespace holdfast::testing
