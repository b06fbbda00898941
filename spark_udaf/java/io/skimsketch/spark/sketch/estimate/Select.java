package io.skimsketch.spark.sketch.estimate;

/** Partial selection (as np.partition): moves the k smallest values of a to a[0 .. k), in some order. */
final class Select {
    private Select() {}

    static void smallest(double[] a, int k) {
        int lo = 0;
        int hi = a.length - 1;
        java.util.concurrent.ThreadLocalRandom rnd = java.util.concurrent.ThreadLocalRandom.current();
        while (k > lo && k <= hi) {
            double pivot = a[lo + rnd.nextInt(hi - lo + 1)];
            int i = lo;
            int j = hi;
            while (i <= j) {
                while (a[i] < pivot) {
                    i++;
                }
                while (a[j] > pivot) {
                    j--;
                }
                if (i <= j) {
                    double t = a[i];
                    a[i++] = a[j];
                    a[j--] = t;
                }
            }
            // now a[lo..j] <= pivot <= a[i..hi], and a[j+1..i-1] == pivot
            if (k <= j + 1) {
                hi = j;
            } else if (k >= i) {
                lo = i;
            } else {
                return;
            }
        }
    }
}
