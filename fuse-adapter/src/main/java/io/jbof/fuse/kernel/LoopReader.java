package io.jbof.fuse.kernel;

import io.jbof.transport.tcp.EventLoops;
import io.jbof.transport.tcp.LoopTurnWork;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.PlatformDependent;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one /dev/fuse descriptor on an initiator queue's event loop, in that loop's own turns: a request
 * is read, turned into an NVMe command and sent by the thread that later gets the completion and writes
 * the reply (run to completion, as an SPDK poller owns its queue pair), with no reader thread to wake and
 * no hand-over between threads. The descriptor is non-blocking and sits in the loop's epoll set tagged
 * as the loop's wake-up eventfd, edge-triggered: a new request wakes a sleeping loop, Netty takes the
 * event for a wake-up, and the loop's turn work ({@link LoopTurnWork}) reads until nothing is waiting.
 */
final class LoopReader implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(LoopReader.class);
    /** Requests read in one turn before the loop serves its sockets again (it turns again at once). */
    static final int MAX_PER_TURN = 64;

    private static final boolean PACKED_EPOLL_EVENT =
            "amd64".equals(System.getProperty("os.arch")) || "x86_64".equals(System.getProperty("os.arch"));

    private final FuseSession session;
    private final EventExecutor loop;
    private final int fd;
    private final int epollFd;
    private final int savedFlags;
    /** A task that only makes the loop turn again (and so read again) instead of sleeping. */
    private final Runnable turnAgain = () -> {};
    /** Set by the loop when every request slot was taken; a reply that frees one clears it and wakes the loop. */
    private volatile boolean starved;

    private boolean ended;

    private LoopReader(FuseSession session, EventExecutor loop, int fd, int epollFd, int savedFlags) {
        this.session = session;
        this.loop = loop;
        this.fd = fd;
        this.epollFd = epollFd;
        this.savedFlags = savedFlags;
    }

    /**
     * Starts reading {@code fd} on the calling thread's loop, which must be {@code loop}; null (and {@code fd}
     * left as it was) where that loop cannot: no epoll loop of {@link EventLoops#group}, or one with turn work.
     */
    static LoopReader attach(FuseSession session, EventExecutor loop, int fd) {
        if (!loop.inEventLoop() || !LoopTurnWork.availableHere()) return null;
        int epollFd = EventLoops.epollFd(loop);
        int wakeFd = EventLoops.wakeupFd(loop);
        if (epollFd < 0 || wakeFd < 0) return null;
        LibC libc = LibC.Holder.LIBC;
        int flags = libc.fcntl(fd, LibC.F_GETFL, 0);
        if (flags < 0 || libc.fcntl(fd, LibC.F_SETFL, flags | LibC.O_NONBLOCK) != 0) return null;
        if (!epoll(libc, LibC.EPOLL_CTL_ADD, epollFd, fd, wakeFd)) {
            log.debug("adding /dev/fuse to the loop's epoll set failed (errno {})", LibC.Holder.errno());
            libc.fcntl(fd, LibC.F_SETFL, flags);
            return null;
        }
        LoopReader r = new LoopReader(session, loop, fd, epollFd, flags);
        LoopTurnWork.set(r);
        return r;
    }

    private static boolean epoll(LibC libc, int op, int epollFd, int fd, int tag) {
        long event = PlatformDependent.allocateMemory(16);
        try {
            PlatformDependent.putInt(event, LibC.EPOLLIN | LibC.EPOLLET);
            PlatformDependent.putLong(event + (PACKED_EPOLL_EVENT ? 4 : 8), tag & 0xFFFFFFFFL);
            return libc.epoll_ctl(epollFd, op, fd, event) == 0;
        } finally {
            PlatformDependent.freeMemory(event);
        }
    }

    /** One turn: reads and dispatches what is waiting, up to {@link #MAX_PER_TURN}. */
    @Override
    public void run() {
        if (ended) return;
        for (int i = 0; i < MAX_PER_TURN; i++) {
            FuseRequest r = session.tryAcquire();
            if (r == null) {
                starved = true;
                // A reply may have freed a slot before the flag was up: look once more.
                r = session.tryAcquire();
                if (r == null) return;
                starved = false;
            }
            int got = session.readAndDispatch(fd, r);
            if (got == FuseSession.EMPTY) return;
            if (got == FuseSession.END) {
                end();
                return;
            }
        }
        loop.execute(turnAgain); // more may be waiting: the edge-triggered descriptor will not say so again
    }

    /** A slot was freed (on any thread): a loop that stopped reading for want of one reads again. */
    void slotFreed() {
        if (starved) {
            starved = false;
            try {
                loop.execute(turnAgain);
            } catch (RejectedExecutionException e) {
                // the loop is shutting down: nothing is read there any more
            }
        }
    }

    private void end() {
        ended = true;
        LoopTurnWork.clear(this);
        LibC libc = LibC.Holder.LIBC;
        epoll(libc, LibC.EPOLL_CTL_DEL, epollFd, fd, 0);
        libc.fcntl(fd, LibC.F_SETFL, savedFlags);
        session.readerEnded();
    }
}
