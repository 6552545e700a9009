package io.jbof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Work a loop of EventLoops.group does at each turn, on real loops. */
class LoopTurnWorkTest {
    private final EventLoopGroup group = EventLoops.group(1, new DefaultThreadFactory("turn-test"));
    private final EventLoop loop = group.next();

    @AfterEach
    void stop() throws Exception {
        group.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
    }

    @Test
    void workSetOnALoopRunsOnThatLoopAtItsNextTurn() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        Set<Thread> threads = ConcurrentHashMap.newKeySet();
        Thread loopThread = loop.submit(Thread::currentThread).get(10, TimeUnit.SECONDS);
        assertTrue(loop.submit(() -> LoopTurnWork.set(() -> {
                    threads.add(Thread.currentThread());
                    ran.countDown();
                }))
                .get(10, TimeUnit.SECONDS));
        // Once the turn that ran the setting task ends, the loop starts another, which runs the work
        // (tasks submitted meanwhile may still run in the first turn: so wait for the work itself).
        assertTrue(ran.await(10, TimeUnit.SECONDS), "the work ran");
        assertEquals(Set.of(loopThread), threads);
    }

    @Test
    void onlyTheLoopsOwnThreadSetsItsWorkAndOnlyOnce() throws Exception {
        assertFalse(LoopTurnWork.set(() -> {}), "not on a loop");
        DefaultEventExecutor other = new DefaultEventExecutor();
        try {
            assertFalse(
                    other.submit(() -> LoopTurnWork.set(() -> {})).get(10, TimeUnit.SECONDS),
                    "a loop without turn work");
        } finally {
            other.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
        assertTrue(loop.submit(() -> LoopTurnWork.set(() -> {})).get(10, TimeUnit.SECONDS));
        assertFalse(loop.submit(() -> LoopTurnWork.set(() -> {})).get(10, TimeUnit.SECONDS), "it has work already");
    }

    @Test
    void clearedWorkLeavesTheLoopFreeForOtherWorkAndOnlyItsOwnWorkClears() throws Exception {
        Runnable mine = () -> {};
        assertTrue(loop.submit(() -> LoopTurnWork.set(mine)).get(10, TimeUnit.SECONDS));
        loop.submit(() -> LoopTurnWork.clear(() -> {})).get(10, TimeUnit.SECONDS);
        assertFalse(loop.submit(LoopTurnWork::availableHere).get(10, TimeUnit.SECONDS), "another's clear took it away");
        loop.submit(() -> LoopTurnWork.clear(mine)).get(10, TimeUnit.SECONDS);
        assertTrue(loop.submit(LoopTurnWork::availableHere).get(10, TimeUnit.SECONDS));
    }

    @Test
    void anEpollLoopTellsItsWakeUpAndEpollDescriptorsAndOtherExecutorsNone() throws Exception {
        assumeTrue(EventLoops.EPOLL, "epoll unavailable");
        assertTrue(EventLoops.wakeupFd(loop) >= 0);
        assertTrue(EventLoops.epollFd(loop) >= 0);
        assertNotEquals(EventLoops.wakeupFd(loop), EventLoops.epollFd(loop));
        DefaultEventExecutor other = new DefaultEventExecutor();
        try {
            assertEquals(-1, EventLoops.epollFd(other));
            assertEquals(-1, EventLoops.wakeupFd(other));
        } finally {
            other.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void pollBeforeSleepIsSetOnlyOnTheCallingLoop() throws Exception {
        assertFalse(LoopTurnWork.pollBeforeSleep(1_000), "not on a loop");
        EventLoopGroup two = EventLoops.group(2, new DefaultThreadFactory("poll-test"));
        try {
            EventLoop a = two.next();
            EventLoop b = two.next();
            long before = b.submit(LoopTurnWork::pollBeforeSleepNanos).get(10, TimeUnit.SECONDS);
            assertTrue(
                    a.submit(() -> LoopTurnWork.pollBeforeSleep(before + 7_000)).get(10, TimeUnit.SECONDS));
            assertEquals(
                    before + 7_000, a.submit(LoopTurnWork::pollBeforeSleepNanos).get(10, TimeUnit.SECONDS));
            assertEquals(
                    before, b.submit(LoopTurnWork::pollBeforeSleepNanos).get(10, TimeUnit.SECONDS), "the other loop");
        } finally {
            two.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }
}
