/* skimsketch.kernels._ckernels, string keys: MurmurHash3 x64-128 (seed 0) h1 fingerprints of byte strings and
 * of an object array's str / bytes elements, equal to skimsketch/keys/fingerprints.py. */
#include "ckernels.h"

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

/* -- string fingerprints ------------------------------------------------------------------ */

PyObject *fingerprints(PyObject *self, PyObject *args) {
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
PyObject *object_fingerprints(PyObject *self, PyObject *args) {
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
