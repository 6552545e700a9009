package io.jbof.target.controller;

/** A listening port, as the discovery log page describes it. */
public record PortInfo(int portId, String transport, String address, int port, boolean ipv6) {
}
