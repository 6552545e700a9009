package io.jbof.target.namespace;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** The thread pools namespaces block in: fixed size, daemon threads started on demand and gone when idle, a bounded queue that refuses when full. */
final class DaemonPool {
    private DaemonPool() {}

    /** {@code threads} threads named {@code prefix}N; a full queue of {@code queued} tasks refuses (RejectedExecutionException). */
    static ExecutorService of(String prefix, int threads, int queued) {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                threads,
                threads,
                30,
                TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(queued),
                r -> {
                    Thread t = new Thread(r, prefix + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                },
                new ThreadPoolExecutor.AbortPolicy());
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }
}
