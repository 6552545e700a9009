package io.jbof.target.cli;

/** slf4j-simple setup for the CLIs: warnings only by default, debug with --verbose. Call before any logger exists. */
public final class Logging {
    private Logging() {}

    public static void configure(boolean verbose) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "debug" : "warn");
        System.setProperty("org.slf4j.simpleLogger.log.io.netty", verbose ? "info" : "warn");
        System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
        System.setProperty("org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS");
        System.setProperty("org.slf4j.simpleLogger.showShortLogName", "true");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
    }
}
