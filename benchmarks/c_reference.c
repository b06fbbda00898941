/* The C reference of benchmarks/bench_update.py: the work of a sketch update as plain C loops.
 *
 * Written apart from skimsketch/kernels/*.c, straight from the definitions (the hash family in
 * skimsketch/keys/hashing.py's docstring, MurmurHash3 x64-128 as published): per key one hash,
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
    uint64_t salt; /* lg > 0: the virtual layout (skimsketch/sketch/skim/virtual.py): each key is first mapped to */
    int64_t lg;    /* y = mix(key ^ salt), hashed as the id y >> (64 - lg) with weight -w when y is odd */
} ref_family;

static inline uint64_t ref_mix(uint64_t z) {
    z ^= z >> 30; z *= 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 27; z *= 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* ``f`` is a local copy in every caller: a store to ``out`` cannot alias its fields */
static inline void scatter(const ref_family *f, uint64_t key, int64_t w, int64_t *out) {
    if (f->lg) {
        uint64_t y = ref_mix(key ^ f->salt);
        key = y >> (64 - f->lg);
        w = (y & 1) ? -w : w;
    }
    uint32_t lo = (uint32_t)key, hi = (uint32_t)(key >> 32);
    uint32_t fold = lo ^ (uint32_t)((f->a * hi + f->b) >> 32);
    uint32_t c0 = fold & 0xFFFF, c1 = fold >> 16, c2 = c0 + c1;
    uint64_t word = 0;
    for (int64_t p = 0; p < f->depth; p++) { /* each word read once, its two halves are tables p and p + 1 */
        int64_t j = p >> 1;
        if (!(p & 1)) word = f->t0[c0 * f->n_words + j] ^ f->t1[c1 * f->n_words + j] ^ f->t2[c2 * f->n_words + j];
        uint32_t u = (uint32_t)(word >> (32 * (p & 1)));
        int64_t bucket = (int64_t)(((uint64_t)(u & 0x7FFFFFFF) * (uint64_t)f->width) >> 31);
        out[p * f->width + bucket] += (u >> 31) ? -w : w;
    }
}

/* counts of int64 keys */
void ref_int_keys(const ref_family *family, const int64_t *keys, int64_t n, int64_t *out) {
    const ref_family f = *family;
    for (int64_t i = 0; i < n; i++) scatter(&f, (uint64_t)keys[i], 1, out);
}

/* the same work written for speed: the table rows of 16 keys located and prefetched before
 * they are read, each 64-bit word read once for its two tables, the row pointer advanced per
 * table (2-4x the plain loop here): the best C loop of this work we know, and the one the
 * extension's kernel is measured against */
void ref_int_keys_prefetch(const ref_family *family, const int64_t *keys, int64_t n, int64_t *out) {
    const ref_family fl = *family, *f = &fl;
    const uint64_t *rows[16][3];
    for (int64_t s = 0; s < n; s += 16) {
        int64_t m = n - s < 16 ? n - s : 16;
        int64_t sign[16];
        for (int64_t i = 0; i < m; i++) {
            uint64_t key = (uint64_t)keys[s + i];
            sign[i] = 1;
            if (f->lg) {
                uint64_t y = ref_mix(key ^ f->salt);
                key = y >> (64 - f->lg);
                sign[i] = (y & 1) ? -1 : 1;
            }
            uint32_t fold = (uint32_t)key ^ (uint32_t)((f->a * (key >> 32) + f->b) >> 32);
            uint32_t c0 = fold & 0xFFFF, c1 = fold >> 16;
            rows[i][0] = f->t0 + c0 * f->n_words;
            rows[i][1] = f->t1 + c1 * f->n_words;
            rows[i][2] = f->t2 + (c0 + c1) * f->n_words;
            for (int r = 0; r < 3; r++) __builtin_prefetch(rows[i][r]);
        }
        for (int64_t i = 0; i < m; i++) {
            int64_t *row = out;
            for (int64_t j = 0; j < f->n_words; j++) {
                uint64_t word = rows[i][0][j] ^ rows[i][1][j] ^ rows[i][2][j];
                for (int h = 0; h < 2 && 2 * j + h < f->depth; h++, row += f->width) {
                    uint32_t u = (uint32_t)(word >> (32 * h));
                    uint64_t bucket = ((uint64_t)(u & 0x7FFFFFFFu) * (uint64_t)f->width) >> 31;
                    row[bucket] += (u >> 31) ? -sign[i] : sign[i];
                }
            }
        }
    }
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
void ref_string_keys(const ref_family *family, const int32_t *offsets, const uint8_t *data, int64_t n,
                     int64_t *out) {
    const ref_family f = *family;
    for (int64_t i = 0; i < n; i++) scatter(&f, ref_murmur(data + offsets[i], offsets[i + 1] - offsets[i]), 1, out);
}

/* the string version: fingerprints of 16 keys, rows prefetched, then the scatter */
void ref_string_keys_prefetch(const ref_family *f, const int32_t *offsets, const uint8_t *data, int64_t n,
                              int64_t *out) {
    int64_t fp[16];
    for (int64_t s = 0; s < n; s += 16) {
        int64_t m = n - s < 16 ? n - s : 16;
        for (int64_t i = 0; i < m; i++)
            fp[i] = (int64_t)ref_murmur(data + offsets[s + i], offsets[s + i + 1] - offsets[s + i]);
        ref_int_keys_prefetch(f, fp, m, out);
    }
}

/* memory read speed: the sum of the buffer's 64-bit words */
uint64_t ref_read(const uint64_t *data, int64_t n_words) {
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i = 0;
    for (; i + 4 <= n_words; i += 4) { s0 += data[i]; s1 += data[i + 1]; s2 += data[i + 2]; s3 += data[i + 3]; }
    for (; i < n_words; i++) s0 += data[i];
    return s0 + s1 + s2 + s3;
}
