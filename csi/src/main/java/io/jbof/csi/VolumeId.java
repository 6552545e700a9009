package io.jbof.csi;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * How a CSI volume is named on a storage host: its subsystem NQN is derived from the CO's volume name
 * (so a repeated CreateVolume finds what an earlier one made, on whichever host it went), and its
 * volume ID is {@code HOST:KEY}, which says where it lives without asking every host.
 */
record VolumeId(String host, String key) {
    static final String NQN_PREFIX = "nqn.2024-01.io.jbof:csi-";

    /** The key of the volume the CO calls {@code name}: 32 hex digits of its SHA-256. */
    static String keyOf(String name) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }

    static boolean isVolumeNqn(String nqn) {
        return nqn.startsWith(NQN_PREFIX);
    }

    static String keyOfNqn(String nqn) {
        return nqn.substring(NQN_PREFIX.length());
    }

    /** The ID, or null when {@code id} is not one this driver made. */
    static VolumeId parse(String id) {
        int colon = id.lastIndexOf(':');
        if (colon <= 0) return null;
        String key = id.substring(colon + 1);
        if (key.length() != 32 || !key.chars().allMatch(c -> Character.digit(c, 16) >= 0)) return null;
        return new VolumeId(id.substring(0, colon), key);
    }

    String nqn() {
        return NQN_PREFIX + key;
    }

    String file(String dir) {
        return dir + "/" + key + ".img";
    }

    @Override
    public String toString() {
        return host + ":" + key;
    }
}
