package io.jbof.transport;

/** Hands each new transport queue to the target, which returns the handler for its commands. */
@FunctionalInterface
public interface TargetQueueAcceptor {
    TargetQueueHandler accept(TargetQueue queue);
}
