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
 *
 * This file holds the module's method table; the kernels live beside it, one job a file, all compiled into
 * this one module (setup.py): ck_update.c (hash_counts, hash_float_cells, virtual_counts), ck_keys.c
 * (fingerprints, object_fingerprints), ck_skim.c (hot_candidates, gather_estimates), ck_heavy.c
 * (heavy_admit); ckernels.h holds the buffer helpers they share.
 */
#include "ckernels.h"

#ifndef SKIMSKETCH_SOURCE_SHA
#define SKIMSKETCH_SOURCE_SHA "unknown"
#endif

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
