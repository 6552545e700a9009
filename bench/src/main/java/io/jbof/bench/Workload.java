package io.jbof.bench;

import java.util.List;

/**
 * One bench run's parameters, in fio's terms.
 *
 * @param blockSize    bytes per I/O (bs)
 * @param iodepth      I/Os in flight per job
 * @param numjobs      jobs; job j drives I/O queue j mod (queues)
 * @param runtimeNanos measured time (after ramp)
 * @param rampNanos    time run before measuring
 * @param offset       first byte of the region in every namespace
 * @param size         bytes of the region (0: to the end of the namespace)
 * @param nsids        namespaces the jobs spread their I/O over, round robin
 * @param verify       write self-checking blocks, then read them all back and check them
 * @param rateIops     per-job fixed rate (0: as fast as possible); latency then counts from the intended start
 */
record Workload(
        String name,
        RwMode rw,
        int rwmixread,
        int blockSize,
        int iodepth,
        int numjobs,
        long runtimeNanos,
        long rampNanos,
        long offset,
        long size,
        List<Integer> nsids,
        boolean verify,
        long rateIops,
        long seed) {
    /** The same workload without its ramp time: later rounds of a run start warm. */
    Workload withoutRamp() {
        return new Workload(
                name,
                rw,
                rwmixread,
                blockSize,
                iodepth,
                numjobs,
                runtimeNanos,
                0,
                offset,
                size,
                nsids,
                verify,
                rateIops,
                seed);
    }
}
