/* skimsketch.kernels._ckernels, the heavy-key table's admission (skimsketch/kernels/heavy.py is the reference,
 * docs/heavy.md): the same state, draws and spills. */
#include "ckernels.h"

/* buckets b1 != b2 in [0, nb) of a key (b1 + 1 + x with x < nb - 1 wraps at most once), and y for its filter bits */
static inline uint64_t heavy_buckets(int64_t key, uint64_t salt, uint64_t nb, uint64_t *b1, uint64_t *b2) {
    uint64_t y = splitmix_fin((uint64_t)key ^ salt);
    *b1 = ((y >> 32) * nb) >> 32;
    *b2 = *b1 + 1 + (((y & 0xFFFFFFFFULL) * (nb - 1)) >> 32);
    if (*b2 >= nb) *b2 -= nb;
    return y;
}

/* the spilled-filter bits p1, p2 in [0, nf) of a key whose bucket hash is y */
static inline void heavy_filter(uint64_t y, uint64_t nf, uint64_t *p1, uint64_t *p2) {
    uint64_t z = splitmix_fin(y);
    *p1 = ((z >> 32) * nf) >> 32;
    *p2 = ((z & 0xFFFFFFFFULL) * nf) >> 32;
}

#define HEAVY_BIT(a, i) (((a)[(i) >> 3] >> ((i) & 7)) & 1)
#define HEAVY_SET(a, i) ((a)[(i) >> 3] |= (uint8_t)(1u << ((i) & 7)))

/* One pass over the arrivals (weights >= 0, checked by the caller; zeros skipped): the reference's steps
 * 1-3 in the same order, the same ties and the same draws; every spill written to spk/spw (at most one an
 * arrival). T is the count type (int64 or double). */
#define HEAVY_ADMIT(NAME, T)                                                                                   \
    static Py_ssize_t NAME(const int64_t *keys, const T *w, const uint8_t *dirty, Py_ssize_t n, int64_t *tk,  \
                           T *tc, uint8_t *clean, uint8_t *spilled, uint64_t nb, uint64_t nf, uint64_t salt,  \
                           uint64_t rng, uint64_t *draws, int64_t *spk, T *spw) {                              \
        Py_ssize_t ns = 0;                                                                                     \
        uint64_t d = *draws;                                                                                   \
        for (Py_ssize_t i = 0; i < n; i++) {                                                                   \
            T wi = w ? w[i] : (T)1;                                                                            \
            if (wi == 0) continue;                                                                             \
            int64_t k = keys[i];                                                                               \
            uint64_t b1, b2, p1, p2, slot;                                                                     \
            uint64_t y = heavy_buckets(k, salt, nb, &b1, &b2);                                                 \
            T *c1 = tc + b1 * 8, *c2 = tc + b2 * 8;                                                            \
            const int64_t *k1 = tk + b1 * 8, *k2 = tk + b2 * 8;                                                \
            int hit = -1, n1 = 0, n2 = 0, e1 = -1, e2 = -1;                                                    \
            for (int j = 0; j < 8; j++) {                                                                      \
                if (c1[j] != 0) { n1++; if (k1[j] == k) { hit = j; break; } } else if (e1 < 0) e1 = j;         \
            }                                                                                                  \
            if (hit >= 0) { c1[hit] += wi; continue; }                                                         \
            for (int j = 0; j < 8; j++) {                                                                      \
                if (c2[j] != 0) { n2++; if (k2[j] == k) { hit = j; break; } } else if (e2 < 0) e2 = j;         \
            }                                                                                                  \
            if (hit >= 0) { c2[hit] += wi; continue; }                                                         \
            heavy_filter(y, nf, &p1, &p2);                                                                     \
            if (n1 < 8 || n2 < 8) {                                                                            \
                slot = n1 <= n2 ? b1 * 8 + e1 : b2 * 8 + e2;                                                   \
            } else {                                                                                           \
                int j1 = 0, j2 = 0;                                                                            \
                for (int j = 1; j < 8; j++) { if (c1[j] < c1[j1]) j1 = j; if (c2[j] < c2[j2]) j2 = j; }        \
                slot = c1[j1] <= c2[j2] ? b1 * 8 + j1 : b2 * 8 + j2;                                           \
                T m = tc[slot];                                                                                \
                d++;                                                                                           \
                uint64_t u = splitmix_fin(rng + d * 0x9E3779B97F4A7C15ULL) >> 11;                              \
                if ((double)u * 0x1p-53 < (double)wi / ((double)m + (double)wi)) {                             \
                    uint64_t o1, o2, q1, q2;                                                                   \
                    spk[ns] = tk[slot]; spw[ns++] = m;                                                         \
                    heavy_filter(heavy_buckets(tk[slot], salt, nb, &o1, &o2), nf, &q1, &q2);                   \
                    HEAVY_SET(spilled, q1); HEAVY_SET(spilled, q2);                                            \
                } else {                                                                                       \
                    spk[ns] = k; spw[ns++] = wi;                                                               \
                    HEAVY_SET(spilled, p1); HEAVY_SET(spilled, p2);                                            \
                    continue;                                                                                  \
                }                                                                                              \
            }                                                                                                  \
            tk[slot] = k; tc[slot] = wi;                                                                       \
            if (!(dirty && dirty[i]) && !(HEAVY_BIT(spilled, p1) && HEAVY_BIT(spilled, p2)))                   \
                clean[slot >> 3] |= (uint8_t)(1u << (slot & 7));                                               \
            else                                                                                               \
                clean[slot >> 3] &= (uint8_t) ~(1u << (slot & 7));                                             \
        }                                                                                                      \
        *draws = d;                                                                                            \
        return ns;                                                                                             \
    }

HEAVY_ADMIT(heavy_admit_int, int64_t)
HEAVY_ADMIT(heavy_admit_float, double)

PyObject *heavy_admit(PyObject *self, PyObject *args) {
    PyObject *keys_o, *w_o, *dirty_o, *tk_o, *tc_o, *clean_o, *spilled_o, *spk_o, *spw_o;
    unsigned long long nb, nf, salt, rng, draws;
    int is_float;
    if (!PyArg_ParseTuple(args, "OOOOOOOKKKKKOOp", &keys_o, &w_o, &dirty_o, &tk_o, &tc_o, &clean_o, &spilled_o, &nb,
                          &nf, &salt, &rng, &draws, &spk_o, &spw_o, &is_float))
        return NULL;
    Buffers in = {.n = 0}, out = {.n = 0};
    Py_ssize_t n, nw = 0, nd = 0, ntk, ntc, ncl, nsp, nspk, nspw, ns = 0;
    const int64_t *keys = get_buffer(&in, keys_o, 8, 0, &n, "keys");
    const void *w = NULL;
    const uint8_t *dirty = NULL;
    if (!keys) goto fail;
    if (w_o != Py_None && !(w = get_buffer(&in, w_o, 8, 0, &nw, "weights"))) goto fail;
    if (dirty_o != Py_None && !(dirty = get_buffer(&in, dirty_o, 1, 0, &nd, "dirty"))) goto fail;
    int64_t *tk = get_buffer(&out, tk_o, 8, 1, &ntk, "table keys");
    void *tc = tk ? get_buffer(&out, tc_o, 8, 1, &ntc, "table counts") : NULL;
    uint8_t *clean = tc ? get_buffer(&out, clean_o, 1, 1, &ncl, "clean") : NULL;
    uint8_t *spilled = clean ? get_buffer(&out, spilled_o, 1, 1, &nsp, "spilled") : NULL;
    int64_t *spk = spilled ? get_buffer(&out, spk_o, 8, 1, &nspk, "spill keys") : NULL;
    void *spw = spk ? get_buffer(&out, spw_o, 8, 1, &nspw, "spill weights") : NULL;
    if (!spw) goto fail;
    if ((w && nw != n) || (dirty && nd != n) || nspk < n || nspw < n || nb < 2 || nb > ((uint64_t)1 << 24) ||
        ntk != (Py_ssize_t)(nb * 8) || ntc != ntk || ncl != (Py_ssize_t)nb || nf < 1 || nf > ((uint64_t)1 << 32) ||
        nsp != (Py_ssize_t)((nf + 7) / 8)) {
        PyErr_SetString(PyExc_ValueError, "heavy_admit: arrays disagree with the table's shape or the keys");
        goto fail;
    }
    uint64_t d = draws;
    Py_BEGIN_ALLOW_THREADS
    if (is_float)
        ns = heavy_admit_float(keys, (const double *)w, dirty, n, tk, (double *)tc, clean, spilled, nb, nf, salt, rng,
                               &d, spk, (double *)spw);
    else
        ns = heavy_admit_int(keys, (const int64_t *)w, dirty, n, tk, (int64_t *)tc, clean, spilled, nb, nf, salt, rng,
                             &d, spk, (int64_t *)spw);
    Py_END_ALLOW_THREADS
    release_all(&in);
    release_all(&out);
    return Py_BuildValue("nK", ns, (unsigned long long)d);
fail:
    release_all(&in);
    release_all(&out);
    return NULL;
}
