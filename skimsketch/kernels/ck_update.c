/* skimsketch.kernels._ckernels, sketch update: the hash family's signed counts of int64 keys (int64 counters,
 * or float64 cells summed in the numpy reference's order), optionally through the virtual key map, and the
 * signed counts per virtual id. */
#include "ckernels.h"

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

PyObject *hash_counts(PyObject *self, PyObject *args) {
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
PyObject *hash_float_cells(PyObject *self, PyObject *args) {
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

/* net[id] += +-1 for each key's virtual id and sign (skimsketch/sketch/skim/virtual.py): the signed count per id. */
PyObject *virtual_counts(PyObject *self, PyObject *args) {
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
