/* The C reference of benchmarks/bench_update.py: the work of a sketch update as plain C loops.
 *
 * Written apart from skimsketch/_ckernels.c, straight from the definitions (the hash family in
 * skimsketch/hashing.py's docstring, MurmurHash3 x64-128 as published): per key one hash,
 * then one signed scatter-add per table into a (depth, width) int64 array. No Python, no
 * canonicalisation, no checks: the speed a hand-written loop reaches on this machine. The
 * benchmark compiles it with gcc (-O3, the extension's flags), loads it with ctypes and checks
 * that it produces the library's counters before timing anything.
 */
#include <stdint.h>
#include <string.h>

typedef struct {
    const uint64_t *t0, *t1, *t2; /* tabulation tables, n_words words per character */
    int64_t n_words;
    uint64_t a, b;
    int64_t width, depth;
} ref_family;

static void scatter(const ref_family *f, uint64_t key, int64_t w, int64_t *out) {
    uint32_t lo = (uint32_t)key, hi = (uint32_t)(key >> 32);
    uint32_t fold = lo ^ (uint32_t)((f->a * hi + f->b) >> 32);
    uint32_t c0 = fold & 0xFFFF, c1 = fold >> 16, c2 = c0 + c1;
    for (int64_t p = 0; p < f->depth; p++) {
        int64_t j = p >> 1;
        uint64_t word = f->t0[c0 * f->n_words + j] ^ f->t1[c1 * f->n_words + j] ^ f->t2[c2 * f->n_words + j];
        uint32_t u = (uint32_t)(word >> (32 * (p & 1)));
        int64_t bucket = (int64_t)(((uint64_t)(u & 0x7FFFFFFF) * (uint64_t)f->width) >> 31);
        out[p * f->width + bucket] += (u >> 31) ? -w : w;
    }
}

/* counts of int64 keys */
void ref_int_keys(const ref_family *f, const int64_t *keys, int64_t n, int64_t *out) {
    for (int64_t i = 0; i < n; i++) scatter(f, (uint64_t)keys[i], 1, out);
}

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t fmix(uint64_t k) {
    k ^= k >> 33; k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ULL;
    return k ^ (k >> 33);
}

/* MurmurHash3_x64_128, seed 0: the first 64-bit half */
uint64_t ref_murmur(const uint8_t *data, int64_t len) {
    const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
    uint64_t h1 = 0, h2 = 0, k1, k2;
    int64_t i, nb = len / 16;
    for (i = 0; i < nb; i++) {
        memcpy(&k1, data + 16 * i, 8);
        memcpy(&k2, data + 16 * i + 8, 8);
        k1 *= c1; k1 = rotl(k1, 31); k1 *= c2; h1 ^= k1;
        h1 = rotl(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52dce729;
        k2 *= c2; k2 = rotl(k2, 33); k2 *= c1; h2 ^= k2;
        h2 = rotl(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495ab5;
    }
    const uint8_t *t = data + 16 * nb;
    int64_t r = len & 15;
    k1 = k2 = 0;
    for (i = r - 1; i >= 8; i--) k2 = (k2 << 8) | t[i];
    for (i = (r < 8 ? r : 8) - 1; i >= 0; i--) k1 = (k1 << 8) | t[i];
    if (r > 8) { k2 *= c2; k2 = rotl(k2, 33); k2 *= c1; h2 ^= k2; }
    if (r > 0) { k1 *= c1; k1 = rotl(k1, 31); k1 *= c2; h1 ^= k1; }
    h1 ^= (uint64_t)len; h2 ^= (uint64_t)len;
    h1 += h2; h2 += h1;
    h1 = fmix(h1); h2 = fmix(h2);
    return h1 + h2;
}

/* counts of byte-string keys in Arrow layout (int32 offsets): fingerprint, then scatter */
void ref_string_keys(const ref_family *f, const int32_t *offsets, const uint8_t *data, int64_t n, int64_t *out) {
    for (int64_t i = 0; i < n; i++) scatter(f, ref_murmur(data + offsets[i], offsets[i + 1] - offsets[i]), 1, out);
}

/* memory read speed: the sum of the buffer's 64-bit words */
uint64_t ref_read(const uint64_t *data, int64_t n_words) {
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i = 0;
    for (; i + 4 <= n_words; i += 4) { s0 += data[i]; s1 += data[i + 1]; s2 += data[i + 2]; s3 += data[i + 3]; }
    for (; i < n_words; i++) s0 += data[i];
    return s0 + s1 + s2 + s3;
}
