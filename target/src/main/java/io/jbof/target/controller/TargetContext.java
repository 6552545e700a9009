package io.jbof.target.controller;

import io.jbof.target.subsystem.Subsystem;
import java.util.Collection;
import java.util.List;

/** What controllers need from the target around them. */
public interface TargetContext {
    /** The subsystem with this NQN, or null. */
    Subsystem subsystem(String nqn);

    Collection<Subsystem> subsystems();

    ControllerRegistry controllers();

    TargetLimits limits();

    List<PortInfo> ports();

    /** Counter bumped whenever the discovery log's contents change. */
    long discoveryGeneration();
}
