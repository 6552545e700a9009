package io.jbof.nvme;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

/** NVMe Qualified Names: validation and the well-known ones. */
public final class Nqn {
    private Nqn() {}

    public static final String DISCOVERY = "nqn.2014-08.org.nvmexpress.discovery";
    /** NQNs are at most 223 bytes of UTF-8 (the 256-byte field leaves room for the terminator). */
    public static final int MAX_LENGTH = 223;

    /** Returns null when valid, or a sentence saying what is wrong. */
    public static String problem(String nqn) {
        if (nqn == null || nqn.isEmpty()) return "the NQN is empty";
        byte[] utf8 = nqn.getBytes(StandardCharsets.UTF_8);
        if (utf8.length > MAX_LENGTH) return "the NQN is " + utf8.length + " bytes long; the limit is " + MAX_LENGTH;
        if (nqn.equals(DISCOVERY)) return null;
        if (nqn.startsWith("nqn.2014-08.org.nvmexpress:uuid:")) {
            String u = nqn.substring("nqn.2014-08.org.nvmexpress:uuid:".length());
            try {
                UUID.fromString(u);
                return u.length() == 36 ? null : "the UUID part '" + u + "' is not 36 characters";
            } catch (IllegalArgumentException e) {
                return "the UUID part '" + u + "' is not a UUID";
            }
        }
        // nqn.yyyy-mm.reverse-domain:anything
        if (!nqn.matches("nqn\\.[0-9]{4}-(0[1-9]|1[0-2])\\.[A-Za-z0-9][A-Za-z0-9.-]*(:.*)?")) {
            return "'" + nqn + "' is not of the form nqn.yyyy-mm.reverse.domain:name (e.g. nqn.2024-01.io.jbof:vol1)";
        }
        return null;
    }

    public static boolean isValid(String nqn) {
        return problem(nqn) == null;
    }

    public static String forUuid(UUID uuid) {
        return "nqn.2014-08.org.nvmexpress:uuid:" + uuid;
    }
}
