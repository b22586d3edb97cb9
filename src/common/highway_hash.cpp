#include "common/highway_hash.hpp"

#include <cstddef>
#include <cstring>

namespace holdfast::detail {

namespace {

using Lanes = std::array<std::uint64_t, 4>;

// The initial multipliers: digits of pi, as the algorithm specifies.
constexpr Lanes init0{0xdbe6d5d5fe4cce2full, 0xa4093822299f31d0ull, 0x13198a2e03707344ull, 0x243f6a8885a308d3ull};
constexpr Lanes init1{0x3bd39e10cb0ef593ull, 0xc0acf169b5f18a8cull, 0xbe5466cf34e90c6cull, 0x452821e638d01377ull};

std::uint64_t swap_halves(std::uint64_t x) { return (x >> 32) | (x << 32); }

std::uint64_t little_endian64(const unsigned char* p) {
    std::uint64_t x = 0;
    for (int i = 7; i >= 0; --i) x = (x << 8) | p[i];
    return x;
}

class State {
public:
    explicit State(const HighwayKey& key) : mul0_(init0), mul1_(init1) {
        for (std::size_t i = 0; i < 4; ++i) {
            v0_[i] = mul0_[i] ^ key[i];
            v1_[i] = mul1_[i] ^ swap_halves(key[i]);
        }
    }

    // One 32-byte packet, read as four little-endian lanes.
    void packet(const unsigned char* bytes) {
        Lanes lanes;
        for (std::size_t i = 0; i < 4; ++i) lanes[i] = little_endian64(bytes + 8 * i);
        update(lanes);
    }

    // The last 1 to 31 bytes: the length mixed into the state, then one
    // packet padded with zeros, whose tail holds the last bytes as the
    // algorithm places them.
    void remainder(const unsigned char* bytes, std::size_t size) {
        const std::size_t size_mod4 = size & 3;
        const std::size_t whole = size & ~std::size_t{3};  // whole 4-byte words
        for (std::size_t i = 0; i < 4; ++i) v0_[i] += (std::uint64_t{size} << 32) + size;
        rotate_halves(static_cast<unsigned>(size));
        unsigned char padded[32] = {};
        std::memcpy(padded, bytes, whole);
        const unsigned char* tail = bytes + whole;
        if (size & 16) {
            // The 4 bytes ending at the last one, into the packet's last word.
            for (std::size_t i = 0; i < 4; ++i) padded[28 + i] = tail[i + size_mod4 - 4];
        } else if (size_mod4 != 0) {
            padded[16] = tail[0];
            padded[17] = tail[size_mod4 >> 1];
            padded[18] = tail[size_mod4 - 1];
        }
        packet(padded);
    }

    std::array<std::uint64_t, 2> finish128() {
        for (int i = 0; i < 6; ++i) permute_and_update();
        return {v0_[0] + mul0_[0] + v1_[2] + mul1_[2], v0_[1] + mul0_[1] + v1_[3] + mul1_[3]};
    }

private:
    void update(const Lanes& lanes) {
        for (std::size_t i = 0; i < 4; ++i) {
            v1_[i] += mul0_[i] + lanes[i];
            mul0_[i] ^= (v1_[i] & 0xffffffffu) * (v0_[i] >> 32);
            v0_[i] += mul1_[i];
            mul1_[i] ^= (v0_[i] & 0xffffffffu) * (v1_[i] >> 32);
        }
        zipper_merge_add(v1_[1], v1_[0], v0_[1], v0_[0]);
        zipper_merge_add(v1_[3], v1_[2], v0_[3], v0_[2]);
        zipper_merge_add(v0_[1], v0_[0], v1_[1], v1_[0]);
        zipper_merge_add(v0_[3], v0_[2], v1_[3], v1_[2]);
    }

    // Adds to (add1, add0) the bytes of (v1, v0) shuffled as the algorithm's
    // byte permutation orders them, so each multiply's high bits spread.
    static void zipper_merge_add(std::uint64_t v1, std::uint64_t v0, std::uint64_t& add1, std::uint64_t& add0) {
        add0 += (((v0 & 0xff000000ull) | (v1 & 0xff00000000ull)) >> 24) |
                (((v0 & 0xff0000000000ull) | (v1 & 0xff000000000000ull)) >> 16) | (v0 & 0xff0000ull) |
                ((v0 & 0xff00ull) << 32) | ((v1 & 0xff00000000000000ull) >> 8) | (v0 << 56);
        add1 += (((v1 & 0xff000000ull) | (v0 & 0xff00000000ull)) >> 24) | (v1 & 0xff0000ull) |
                ((v1 & 0xff0000000000ull) >> 16) | ((v1 & 0xff00ull) << 24) | ((v0 & 0xff000000000000ull) >> 8) |
                ((v1 & 0xffull) << 48) | (v0 & 0xff00000000000000ull);
    }

    // Rotates each 32-bit half of every v1 lane left by `count` (0 to 31).
    void rotate_halves(unsigned count) {
        if (count == 0) return;
        for (std::uint64_t& lane : v1_) {
            const std::uint32_t low = static_cast<std::uint32_t>(lane);
            const std::uint32_t high = static_cast<std::uint32_t>(lane >> 32);
            const auto rotl = [count](std::uint32_t x) { return (x << count) | (x >> (32 - count)); };
            lane = (std::uint64_t{rotl(high)} << 32) | rotl(low);
        }
    }

    void permute_and_update() {
        update({swap_halves(v0_[2]), swap_halves(v0_[3]), swap_halves(v0_[0]), swap_halves(v0_[1])});
    }

    Lanes v0_{}, v1_{}, mul0_, mul1_;
};

State absorbed(const HighwayKey& key, std::string_view bytes) {
    State state(key);
    const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
    std::size_t at = 0;
    for (; at + 32 <= bytes.size(); at += 32) state.packet(data + at);
    if (at < bytes.size()) state.remainder(data + at, bytes.size() - at);
    return state;
}

}  // namespace

std::array<std::uint64_t, 2> highway_hash128(const HighwayKey& key, std::string_view bytes) {
    return absorbed(key, bytes).finish128();
}

}  // namespace holdfast::detail
