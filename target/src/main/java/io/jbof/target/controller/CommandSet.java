package io.jbof.target.controller;

/** The three command handlers a queue dispatches to; stateless, shared by every queue of a target. */
public final class CommandSet {
    final FabricsCommands fabrics;
    final AdminCommands admin;
    final IoCommands io;
    final InflightBudget inflight;
    final TargetLimits limits;

    public CommandSet(TargetContext target) {
        this(target, new InflightBudget(0));
    }

    public CommandSet(TargetContext target, InflightBudget inflight) {
        this.fabrics = new FabricsCommands(target);
        this.admin = new AdminCommands(target);
        this.io = new IoCommands();
        this.inflight = inflight;
        this.limits = target.limits();
    }
}
