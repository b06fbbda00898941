/* skimsketch.kernels._ckernels: the compiled kernels behind skimsketch.kernels (docs/kernels.md).
 *
 * Each function computes exactly what its numpy reference computes (skimsketch/kernels/__init__.py,
 * skimsketch/keys/fingerprints.py), in one pass over the keys; tests/core/test_kernels*.py check
 * byte identity on every key type, seed and shape. Arrays come in as C-contiguous buffers
 * whose dtypes the Python side has already checked; nothing here allocates Python objects
 * per key.
 *
 *   hash_counts(keys, weights|None, t0, t1, t2, n_words, a, b, width, depth, out[, salt, lg])
 *       out[p, bucket_p(k)] += sign_p(k) * w   (int64 weights or counts; out int64 (depth, width))
 *   hash_float_cells(keys, weights, t0, t1, t2, n_words, a, b, width, depth, chunk, out, scratch, cells[, salt, lg])
 *       out[p, 2 bucket + (sign < 0)] += w     (float64, summed in the reference's order)
 *   With lg > 0 both first map each key to its virtual id and sign (skimsketch/sketch/skim/virtual.py):
 *   y = mix(key ^ salt), key = y >> (64 - lg), w = -w when y is odd.
 *   fingerprints(offsets, data, out)           MurmurHash3 x64-128 (seed 0) h1 of each byte string
 *   object_fingerprints(objects, nulls, out, null_mask) -> 1, or 0 if some element is not
 *       str / bytes / a null (the caller then takes the element-by-element path)
 *   virtual_counts(keys, salt, lg, net)       net[id(k)] += sign(k): signed counts per virtual id
 *   hot_candidates(order, starts, hot, exclude, depth, width, n, need, counts, out) -> count
 *       the skim's candidate scan: keys in a hot bucket in >= need tables
 *   gather_estimates(residual, buckets, signs, idx, depth, width, n, out)
 *       out[p, i] = residual[p, buckets[p, idx[i]]] * signs[p, idx[i]]
 *   heavy_admit(keys, weights|None, dirty|None, tkeys, tcounts, clean, spilled, buckets, filter_bits, salt, rng,
 *               draws, spill_keys, spill_weights, float) -> (spilled count, draws)
 *       the heavy-key table's admission loop (skimsketch/kernels/heavy.py is the reference, docs/heavy.md)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef SKIMSKETCH_SOURCE_SHA
#define SKIMSKETCH_SOURCE_SHA "unknown"
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define LOAD64(p) __builtin_bswap64(load64_raw(p))
#else
#define LOAD64(p) load64_raw(p)
#endif

static inline uint64_t load64_raw(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t fmix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/* h1 of MurmurHash3_x64_128(data, len, seed 0), as a signed 64-bit value. */
static int64_t murmur_h1(const uint8_t *data, size_t len) {
    const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
    uint64_t h1 = 0, h2 = 0;
    size_t nblocks = len / 16;
    const uint8_t *p = data;
    for (size_t i = 0; i < nblocks; i++, p += 16) {
        uint64_t k1 = LOAD64(p), k2 = LOAD64(p + 8);
        k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
        h1 = rotl64(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52dce729;
        k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
        h2 = rotl64(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495ab5;
    }
    const uint8_t *tail = data + nblocks * 16;
    uint64_t k1 = 0, k2 = 0;
    switch (len & 15) {
    case 15: k2 ^= (uint64_t)tail[14] << 48; /* fall through */
    case 14: k2 ^= (uint64_t)tail[13] << 40; /* fall through */
    case 13: k2 ^= (uint64_t)tail[12] << 32; /* fall through */
    case 12: k2 ^= (uint64_t)tail[11] << 24; /* fall through */
    case 11: k2 ^= (uint64_t)tail[10] << 16; /* fall through */
    case 10: k2 ^= (uint64_t)tail[9] << 8; /* fall through */
    case 9:
        k2 ^= (uint64_t)tail[8];
        k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
        /* fall through */
    case 8: k1 ^= (uint64_t)tail[7] << 56; /* fall through */
    case 7: k1 ^= (uint64_t)tail[6] << 48; /* fall through */
    case 6: k1 ^= (uint64_t)tail[5] << 40; /* fall through */
    case 5: k1 ^= (uint64_t)tail[4] << 32; /* fall through */
    case 4: k1 ^= (uint64_t)tail[3] << 24; /* fall through */
    case 3: k1 ^= (uint64_t)tail[2] << 16; /* fall through */
    case 2: k1 ^= (uint64_t)tail[1] << 8; /* fall through */
    case 1:
        k1 ^= (uint64_t)tail[0];
        k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
    }
    h1 ^= (uint64_t)len; h2 ^= (uint64_t)len;
    h1 += h2; h2 += h1;
    h1 = fmix64(h1); h2 = fmix64(h2);
    h1 += h2;
    return (int64_t)h1;
}

/* -- buffers -------------------------------------------------------------------------- */

typedef struct {
    Py_buffer views[8];
    int n;
} Buffers;

static void release_all(Buffers *b) {
    for (int i = 0; i < b->n; i++) PyBuffer_Release(&b->views[i]);
    b->n = 0;
}

/* A C-contiguous buffer of items of ``itemsize`` bytes (``writable``: for output). */
static void *get_buffer(Buffers *b, PyObject *obj, Py_ssize_t itemsize, int writable, Py_ssize_t *count,
                        const char *what) {
    Py_buffer *v = &b->views[b->n];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, v, flags) < 0) return NULL;
    b->n++;
    if (v->itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: expected items of %zd bytes, got %zd", what, itemsize, v->itemsize);
        return NULL;
    }
    *count = v->len / itemsize;
    return v->buf;
}

/* -- the hash family (skimsketch/keys/hashing.py): row hash u of key x in table p -------------- */

typedef struct {
    const uint64_t *t0, *t1, *t2;
    Py_ssize_t n_words;
    uint64_t a, b;
    uint64_t width;
    int depth;
} Family;

static int parse_family(Buffers *bufs, Family *f, PyObject *t0, PyObject *t1, PyObject *t2, Py_ssize_t n_words,
                        unsigned long long a, unsigned long long b, Py_ssize_t width, int depth) {
    Py_ssize_t n0, n1, n2;
    f->t0 = get_buffer(bufs, t0, 8, 0, &n0, "t0");
    if (!f->t0) return -1;
    f->t1 = get_buffer(bufs, t1, 8, 0, &n1, "t1");
    if (!f->t1) return -1;
    f->t2 = get_buffer(bufs, t2, 8, 0, &n2, "t2");
    if (!f->t2) return -1;
    if (n_words < 1 || depth < 1 || depth > 2 * n_words || width < 1 || width > (1 << 24) ||
        n0 != 65536 * n_words || n1 != 65536 * n_words || n2 != 131071 * n_words) {
        PyErr_SetString(PyExc_ValueError, "hash tables do not match n_words, depth and width");
        return -1;
    }
    f->n_words = n_words;
    f->a = a;
    f->b = b;
    f->width = (uint64_t)width;
    f->depth = depth;
    return 0;
}

/* The table rows of one key's three characters. */
static inline void key_rows(const Family *f, int64_t key, const uint64_t **r0, const uint64_t **r1,
                            const uint64_t **r2) {
    uint64_t x = (uint64_t)key;
    uint32_t lo = (uint32_t)x, hi = (uint32_t)(x >> 32);
    uint32_t fold = lo ^ (uint32_t)((f->a * (uint64_t)hi + f->b) >> 32);
    uint32_t c0 = fold & 0xFFFF, c1 = fold >> 16;
    *r0 = f->t0 + (size_t)c0 * f->n_words;
    *r1 = f->t1 + (size_t)c1 * f->n_words;
    *r2 = f->t2 + (size_t)(c0 + c1) * f->n_words;
}

#define BLOCK 16 /* keys whose table rows are located (and prefetched) before they are read */

/* The virtual key map of skimsketch/sketch/skim/virtual.py: y = mix(key ^ salt), id = y >> (64 - lg), sign from bit 0. */
typedef struct {
    uint64_t salt;
    int shift;
} Virtual;

static int check_lg(int lg, const char *what) {
    if (lg >= 0 && lg <= 62) return 0;
    PyErr_Format(PyExc_ValueError, "%s: lg=%d is outside [1, 62] (0: no virtual map)", what, lg);
    return -1;
}

static inline uint64_t splitmix_fin(uint64_t z) {
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* out[p, bucket] += sign * w (w NULL: 1), modulo 2**64: exact while the true sums fit int64.
 * Inlined twice, so the unweighted loop has no weight load. */
static inline __attribute__((always_inline)) void count_keys(const Family *fp, const int64_t *keys, const int64_t *w,
                                                             Py_ssize_t n, uint64_t *out, const Virtual *v) {
    const Family f = *fp;
    const uint64_t *r0[BLOCK], *r1[BLOCK], *r2[BLOCK];
    uint64_t flip[BLOCK]; /* 0, or all ones: the virtual sign -1 */
    for (Py_ssize_t s = 0; s < n; s += BLOCK) {
        Py_ssize_t m = n - s < BLOCK ? n - s : BLOCK;
        for (Py_ssize_t i = 0; i < m; i++) {
            int64_t key = keys[s + i];
            flip[i] = 0;
            if (v) {
                uint64_t y = splitmix_fin((uint64_t)key ^ v->salt);
                key = (int64_t)(y >> v->shift);
                flip[i] = 0 - (y & 1);
            }
            key_rows(&f, key, &r0[i], &r1[i], &r2[i]);
            __builtin_prefetch(r0[i]);
            __builtin_prefetch(r1[i]);
            __builtin_prefetch(r2[i]);
        }
        for (Py_ssize_t i = 0; i < m; i++) {
            uint64_t wi = w ? (uint64_t)w[s + i] : 1;
            wi = (wi ^ flip[i]) - flip[i]; /* times the virtual sign */
            uint64_t *row = out;
            for (Py_ssize_t j = 0; j < f.n_words; j++) {
                uint64_t word = r0[i][j] ^ r1[i][j] ^ r2[i][j];
                for (int h = 0; h < 2 && 2 * j + h < f.depth; h++, row += f.width) {
                    uint32_t u = (uint32_t)(word >> (32 * h));
                    uint64_t bucket = ((uint64_t)(u & 0x7FFFFFFFu) * f.width) >> 31;
                    row[bucket] += (u >> 31) ? 0 - wi : wi;
                }
            }
        }
    }
}

static PyObject *hash_counts(PyObject *self, PyObject *args) {
    PyObject *keys_o, *weights_o, *t0, *t1, *t2, *out_o;
    Py_ssize_t n_words, width;
    unsigned long long a, b;
    int depth;
    unsigned long long salt = 0;
    int lg = 0;
    if (!PyArg_ParseTuple(args, "OOOOOnKKniO|Ki", &keys_o, &weights_o, &t0, &t1, &t2, &n_words, &a, &b, &width,
                          &depth, &out_o, &salt, &lg))
        return NULL;
    if (check_lg(lg, "hash_counts") < 0) return NULL;
    Virtual virt = {salt, 64 - lg};
    Buffers bufs = {.n = 0};
    Family f;
    Py_ssize_t n, nw = 0, nout;
    const int64_t *keys = get_buffer(&bufs, keys_o, 8, 0, &n, "keys");
    const int64_t *w = NULL;
    int64_t *out;
    if (!keys) goto fail;
    if (weights_o != Py_None) {
        w = get_buffer(&bufs, weights_o, 8, 0, &nw, "weights");
        if (!w) goto fail;
        if (nw != n) {
            PyErr_SetString(PyExc_ValueError, "weights and keys differ in length");
            goto fail;
        }
    }
    out = get_buffer(&bufs, out_o, 8, 1, &nout, "out");
    if (!out || parse_family(&bufs, &f, t0, t1, t2, n_words, a, b, width, depth) < 0) goto fail;
    if (nout != (Py_ssize_t)depth * width) {
        PyErr_SetString(PyExc_ValueError, "out must hold depth * width counters");
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    if (lg && w)
        count_keys(&f, keys, w, n, (uint64_t *)out, &virt);
    else if (lg)
        count_keys(&f, keys, NULL, n, (uint64_t *)out, &virt);
    else if (w)
        count_keys(&f, keys, w, n, (uint64_t *)out, NULL);
    else
        count_keys(&f, keys, NULL, n, (uint64_t *)out, NULL);
    Py_END_ALLOW_THREADS
    release_all(&bufs);
    Py_RETURN_NONE;
fail:
    release_all(&bufs);
    return NULL;
}

/* Float weights, summed in the numpy reference's order: per chunk of ``chunk`` keys each
 * cell (2 bucket + sign bit, per table) sums its weights in key order starting from 0.0,
 * then the chunk's sum is added to ``out``. ``scratch`` (float64, as long as ``out``) must
 * be all zero; it is all zero again on return. */
static PyObject *hash_float_cells(PyObject *self, PyObject *args) {
    PyObject *keys_o, *weights_o, *t0, *t1, *t2, *out_o, *scratch_o, *cells_o;
    Py_ssize_t n_words, width, chunk;
    unsigned long long a, b;
    int depth;
    unsigned long long salt = 0;
    int lg = 0;
    if (!PyArg_ParseTuple(args, "OOOOOnKKninOOO|Ki", &keys_o, &weights_o, &t0, &t1, &t2, &n_words, &a, &b, &width,
                          &depth, &chunk, &out_o, &scratch_o, &cells_o, &salt, &lg))
        return NULL;
    if (check_lg(lg, "hash_float_cells") < 0) return NULL;
    Buffers bufs = {.n = 0};
    Family f;
    Py_ssize_t n, nw, nout, nscratch, ncells;
    const int64_t *keys = get_buffer(&bufs, keys_o, 8, 0, &n, "keys");
    const double *w = keys ? get_buffer(&bufs, weights_o, 8, 0, &nw, "weights") : NULL;
    double *out = w ? get_buffer(&bufs, out_o, 8, 1, &nout, "out") : NULL;
    double *scratch = out ? get_buffer(&bufs, scratch_o, 8, 1, &nscratch, "scratch") : NULL;
    int64_t *cells = scratch ? get_buffer(&bufs, cells_o, 8, 1, &ncells, "cells") : NULL;
    if (!cells || parse_family(&bufs, &f, t0, t1, t2, n_words, a, b, width, depth) < 0) goto fail;
    if (nw != n || nout != 2 * (Py_ssize_t)depth * width || nscratch != nout || chunk < 1 ||
        ncells < chunk * depth) {
        PyErr_SetString(PyExc_ValueError, "hash_float_cells: array sizes do not match");
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t s = 0; s < n; s += chunk) {
        Py_ssize_t e = n - s < chunk ? n : s + chunk, c = 0;
        for (Py_ssize_t i = s; i < e; i++) {
            const uint64_t *r0, *r1, *r2;
            int64_t key = keys[i];
            double wi = w[i];
            if (lg) {
                uint64_t y = splitmix_fin((uint64_t)key ^ salt);
                key = (int64_t)(y >> (64 - lg));
                if (y & 1) wi = -wi;
            }
            key_rows(&f, key, &r0, &r1, &r2);
            int64_t base = 0;
            for (Py_ssize_t j = 0; j < f.n_words; j++) {
                uint64_t word = r0[j] ^ r1[j] ^ r2[j];
                for (int h = 0; h < 2 && 2 * j + h < depth; h++, base += 2 * (int64_t)f.width) {
                    uint32_t u = (uint32_t)(word >> (32 * h));
                    uint64_t bucket = ((uint64_t)(u & 0x7FFFFFFFu) * f.width) >> 31;
                    int64_t cell = base + 2 * (int64_t)bucket + (u >> 31);
                    scratch[cell] += wi;
                    cells[c++] = cell;
                }
            }
        }
        for (Py_ssize_t i = 0; i < c; i++) { /* a cell seen twice adds 0.0 the second time: no change */
            out[cells[i]] += scratch[cells[i]];
            scratch[cells[i]] = 0.0;
        }
    }
    Py_END_ALLOW_THREADS
    release_all(&bufs);
    Py_RETURN_NONE;
fail:
    release_all(&bufs);
    return NULL;
}

/* -- string fingerprints ------------------------------------------------------------------ */

static PyObject *fingerprints(PyObject *self, PyObject *args) {
    PyObject *offsets_o, *data_o, *out_o;
    if (!PyArg_ParseTuple(args, "OOO", &offsets_o, &data_o, &out_o)) return NULL;
    Buffers bufs = {.n = 0};
    Py_ssize_t noff, ndata, nout;
    const int64_t *offsets = get_buffer(&bufs, offsets_o, 8, 0, &noff, "offsets");
    const uint8_t *data = offsets ? get_buffer(&bufs, data_o, 1, 0, &ndata, "data") : NULL;
    int64_t *out = data ? get_buffer(&bufs, out_o, 8, 1, &nout, "out") : NULL;
    if (!out) goto fail;
    if (noff != nout + 1) {
        PyErr_SetString(PyExc_ValueError, "fingerprints: offsets must be one longer than out");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < nout; i++) {
        if (offsets[i] < 0 || offsets[i + 1] < offsets[i] || offsets[i + 1] > ndata) {
            PyErr_Format(PyExc_ValueError, "fingerprints: offsets[%zd:%zd] = %lld, %lld is outside the %zd data bytes",
                         i, i + 2, (long long)offsets[i], (long long)offsets[i + 1], ndata);
            goto fail;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < nout; i++) out[i] = murmur_h1(data + offsets[i], (size_t)(offsets[i + 1] - offsets[i]));
    Py_END_ALLOW_THREADS
    release_all(&bufs);
    Py_RETURN_NONE;
fail:
    release_all(&bufs);
    return NULL;
}

/* Fingerprints of an object array's str (UTF-8) and bytes elements; ``None``, float NaN and
 * the objects of the tuple ``nulls`` (pandas.NA, NaT) are nulls (fingerprint 0, mask 1).
 * Returns False at the first other element (or a str that has no UTF-8 form), leaving the
 * rest unwritten: the caller then canonicalises element by element, which names the error. */
static PyObject *object_fingerprints(PyObject *self, PyObject *args) {
    PyObject *objs_o, *nulls, *out_o, *mask_o;
    if (!PyArg_ParseTuple(args, "OO!OO", &objs_o, &PyTuple_Type, &nulls, &out_o, &mask_o)) return NULL;
    Buffers bufs = {.n = 0};
    Py_ssize_t n, nout, nmask;
    PyObject *const *objs = get_buffer(&bufs, objs_o, sizeof(PyObject *), 0, &n, "objects");
    int64_t *out = objs ? get_buffer(&bufs, out_o, 8, 1, &nout, "out") : NULL;
    uint8_t *mask = out ? get_buffer(&bufs, mask_o, 1, 1, &nmask, "null_mask") : NULL;
    if (!mask) goto fail;
    if (bufs.views[0].format == NULL || strcmp(bufs.views[0].format, "O") != 0) {
        PyErr_SetString(PyExc_TypeError, "object_fingerprints: expected an object array");
        goto fail;
    }
    if (nout != n || nmask != n) {
        PyErr_SetString(PyExc_ValueError, "object_fingerprints: out and null_mask must match the objects");
        goto fail;
    }
    Py_ssize_t n_nulls = PyTuple_GET_SIZE(nulls);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = objs[i];
        mask[i] = 0;
        if (PyUnicode_Check(x)) {
            if (PyUnicode_IS_COMPACT_ASCII(x)) { /* the characters are the UTF-8 bytes */
                out[i] = murmur_h1((const uint8_t *)PyUnicode_DATA(x), (size_t)PyUnicode_GET_LENGTH(x));
                continue;
            }
            PyObject *utf8 = PyUnicode_AsUTF8String(x); /* a temporary: the key object is left as it was */
            if (!utf8) {
                PyErr_Clear();
                goto decline;
            }
            out[i] = murmur_h1((const uint8_t *)PyBytes_AS_STRING(utf8), (size_t)PyBytes_GET_SIZE(utf8));
            Py_DECREF(utf8);
        } else if (PyBytes_Check(x)) {
            out[i] = murmur_h1((const uint8_t *)PyBytes_AS_STRING(x), (size_t)PyBytes_GET_SIZE(x));
        } else if (x == Py_None || (PyFloat_CheckExact(x) && isnan(PyFloat_AS_DOUBLE(x)))) {
            out[i] = 0;
            mask[i] = 1;
        } else {
            int is_null = 0;
            for (Py_ssize_t j = 0; j < n_nulls; j++) is_null |= x == PyTuple_GET_ITEM(nulls, j);
            if (!is_null) goto decline;
            out[i] = 0;
            mask[i] = 1;
        }
    }
    release_all(&bufs);
    Py_RETURN_TRUE;
decline:
    release_all(&bufs);
    Py_RETURN_FALSE;
fail:
    release_all(&bufs);
    return NULL;
}

/* -- the skim's candidate scan (skimsketch/sketch/skim/skimdense.py) ----------------------------------- */

/* Candidates (not excluded) that sit in a hot bucket in at least ``need`` tables. ``counts``
 * (uint8, one per candidate) must be all zero; it holds the counts on return.
 * ``order`` (depth, n) and ``starts`` (depth, width + 1) index each table's buckets: the
 * candidates of bucket b of table p are order[p, starts[p, b] : starts[p, b + 1]]. Only hot
 * buckets are visited; returns how many indices were written to ``out`` (unsorted: the
 * caller sorts). */
static PyObject *hot_candidates(PyObject *self, PyObject *args) {
    PyObject *order_o, *starts_o, *hot_o, *exclude_o, *counts_o, *out_o;
    Py_ssize_t depth, width, n;
    int need;
    if (!PyArg_ParseTuple(args, "OOOOnnniOO", &order_o, &starts_o, &hot_o, &exclude_o, &depth, &width, &n, &need,
                          &counts_o, &out_o))
        return NULL;
    Buffers bufs = {.n = 0};
    Py_ssize_t norder, nstarts, nhot, nexcl, ncounts, nout, written = 0;
    const int64_t *order = get_buffer(&bufs, order_o, 8, 0, &norder, "order");
    const int64_t *starts = order ? get_buffer(&bufs, starts_o, 8, 0, &nstarts, "starts") : NULL;
    const uint8_t *hot = starts ? get_buffer(&bufs, hot_o, 1, 0, &nhot, "hot") : NULL;
    const uint8_t *excl = hot ? get_buffer(&bufs, exclude_o, 1, 0, &nexcl, "exclude") : NULL;
    uint8_t *counts = excl ? get_buffer(&bufs, counts_o, 1, 1, &ncounts, "counts") : NULL;
    int64_t *out = counts ? get_buffer(&bufs, out_o, 8, 1, &nout, "out") : NULL;
    if (!out) goto fail;
    if (norder != depth * n || nstarts != depth * (width + 1) || nhot != depth * width || nexcl != n ||
        ncounts != n || nout != n || need < 1 || need > 255 || depth > 255) {
        PyErr_SetString(PyExc_ValueError, "hot_candidates: array sizes do not match");
        goto fail;
    }
    for (Py_ssize_t p = 0; p < depth; p++) { /* the index must stay inside the candidates */
        const int64_t *st = starts + p * (width + 1);
        if (st[0] < 0 || st[width] > n) goto bad_index;
        for (Py_ssize_t b = 0; b < width; b++)
            if (st[b] > st[b + 1]) goto bad_index;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t p = 0; p < depth; p++) { /* count, emitting a key when its count reaches need */
        const int64_t *ord = order + p * n, *st = starts + p * (width + 1);
        const uint8_t *h = hot + p * width;
        for (Py_ssize_t b = 0; b < width; b++) {
            if (!h[b]) continue;
            for (int64_t k = st[b]; k < st[b + 1]; k++) {
                int64_t i = ord[k];
                if (++counts[i] == need && !excl[i]) out[written++] = i;
            }
        }
    }
    Py_END_ALLOW_THREADS
    release_all(&bufs);
    return PyLong_FromSsize_t(written);
bad_index:
    PyErr_SetString(PyExc_ValueError, "hot_candidates: starts is not an index of the candidates");
fail:
    release_all(&bufs);
    return NULL;
}

/* out[p, i] = residual[p, buckets[p, idx[i]]] * signs[p, idx[i]]: the table estimates of the keys idx.
 * ``buckets`` and ``signs`` are (depth, n) arrays whose element (p, j) sits at p * sp + j * sj of
 * their C-contiguous buffers (sp, sj = n, 1 for C order; 1, depth for a transposed array). */
static PyObject *gather_estimates(PyObject *self, PyObject *args) {
    PyObject *res_o, *buckets_o, *signs_o, *idx_o, *out_o;
    Py_ssize_t depth, width, n, sp, sj;
    if (!PyArg_ParseTuple(args, "OOOOnnnnnO", &res_o, &buckets_o, &signs_o, &idx_o, &depth, &width, &n, &sp, &sj,
                          &out_o))
        return NULL;
    Buffers bufs = {.n = 0};
    Py_ssize_t nres, nb, ns, k, nout;
    const double *res = get_buffer(&bufs, res_o, 8, 0, &nres, "residual");
    const int64_t *buckets = res ? get_buffer(&bufs, buckets_o, 8, 0, &nb, "buckets") : NULL;
    const double *signs = buckets ? get_buffer(&bufs, signs_o, 8, 0, &ns, "signs") : NULL;
    const int64_t *idx = signs ? get_buffer(&bufs, idx_o, 8, 0, &k, "idx") : NULL;
    double *out = idx ? get_buffer(&bufs, out_o, 8, 1, &nout, "out") : NULL;
    if (!out) goto fail;
    if (nres != depth * width || nb != depth * n || ns != depth * n || nout != depth * k ||
        !((sp == n && sj == 1) || (sp == 1 && sj == depth))) {
        PyErr_SetString(PyExc_ValueError, "gather_estimates: array sizes do not match");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        if (idx[i] < 0 || idx[i] >= n) {
            PyErr_Format(PyExc_IndexError, "gather_estimates: index %lld outside [0, %zd)", (long long)idx[i], n);
            goto fail;
        }
        for (Py_ssize_t p = 0; p < depth; p++) {
            int64_t b = buckets[p * sp + idx[i] * sj];
            if (b < 0 || b >= width) {
                PyErr_Format(PyExc_IndexError, "gather_estimates: bucket %lld outside [0, %zd)", (long long)b, width);
                goto fail;
            }
        }
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < k; i++) {
        Py_ssize_t j = idx[i] * sj;
        for (Py_ssize_t p = 0; p < depth; p++)
            out[p * k + i] = res[p * width + buckets[p * sp + j]] * signs[p * sp + j];
    }
    Py_END_ALLOW_THREADS
    release_all(&bufs);
    Py_RETURN_NONE;
fail:
    release_all(&bufs);
    return NULL;
}

/* net[id] += +-1 for each key's virtual id and sign (skimsketch/sketch/skim/virtual.py): the signed count per id. */
static PyObject *virtual_counts(PyObject *self, PyObject *args) {
    PyObject *keys_o, *net_o;
    unsigned long long salt;
    int lg;
    if (!PyArg_ParseTuple(args, "OKiO", &keys_o, &salt, &lg, &net_o)) return NULL;
    if (lg < 1 || lg > 30) {
        PyErr_Format(PyExc_ValueError, "virtual_counts: lg=%d is outside [1, 30]", lg);
        return NULL;
    }
    Buffers bufs = {.n = 0};
    Py_ssize_t n, nnet;
    const int64_t *keys = get_buffer(&bufs, keys_o, 8, 0, &n, "keys");
    uint64_t *net = keys ? get_buffer(&bufs, net_o, 8, 1, &nnet, "net") : NULL;
    if (!net) goto fail;
    if (nnet != ((Py_ssize_t)1 << lg)) {
        PyErr_SetString(PyExc_ValueError, "virtual_counts: net must hold 2**lg counts");
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t y = splitmix_fin((uint64_t)keys[i] ^ salt);
        net[y >> (64 - lg)] += (y & 1) ? (uint64_t)-1 : 1;
    }
    Py_END_ALLOW_THREADS
    release_all(&bufs);
    Py_RETURN_NONE;
fail:
    release_all(&bufs);
    return NULL;
}


/* -- the heavy-key table's admission (skimsketch/kernels/heavy.py, docs/heavy.md) ------------------------- */

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

static PyObject *heavy_admit(PyObject *self, PyObject *args) {
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

static PyMethodDef methods[] = {
    {"virtual_counts", virtual_counts, METH_VARARGS, "Signed key counts per virtual id."},
    {"heavy_admit", heavy_admit, METH_VARARGS, "The heavy-key table's admission loop (docs/heavy.md)."},
    {"hot_candidates", hot_candidates, METH_VARARGS, "Candidates in hot buckets of at least need tables."},
    {"gather_estimates", gather_estimates, METH_VARARGS, "Table estimates residual[p, bucket] * sign of keys."},
    {"hash_counts", hash_counts, METH_VARARGS, "Signed int64 hash-sketch counts of int64 keys (see module docs)."},
    {"hash_float_cells", hash_float_cells, METH_VARARGS, "Float64 (+, -) cell sums of weighted int64 keys."},
    {"fingerprints", fingerprints, METH_VARARGS, "MurmurHash3 x64-128 h1 of (offsets, data) byte strings."},
    {"object_fingerprints", object_fingerprints, METH_VARARGS, "Fingerprints of an object array of str/bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ckernels", NULL, -1, methods};

PyMODINIT_FUNC PyInit__ckernels(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddStringConstant(m, "SOURCE_SHA", SKIMSKETCH_SOURCE_SHA) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
