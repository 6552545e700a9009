package io.jbof.nvme.tls;

/**
 * The PSK identity an NVMe/TCP host offers in its TLS ClientHello (NVMe/TCP transport specification,
 * TP 8018): {@code NVMe<v><R|G><hh> <hostnqn> <subnqn>[ <digest>]}, v the identity version (0, or 1 with
 * the PSK digest), R a retained and G a generated PSK, hh the cipher hash (01 SHA-256, 02 SHA-384).
 *
 * @param digest base64 PSK digest of a version 1 identity; null for version 0
 */
public record TlsPskIdentity(
        int version, boolean generated, int cipher, String hostNqn, String subsysNqn, String digest) {
    /** Longest identity accepted: two NQNs of 223 bytes, the prefix and a SHA-384 digest, with room. */
    public static final int MAX_LENGTH = 600;

    /** Parses an offered identity; null when it is not an NVMe identity of a version we know. */
    public static TlsPskIdentity parse(String s) {
        if (s == null || s.length() > MAX_LENGTH || s.length() < 10 || !s.startsWith("NVMe")) return null;
        char v = s.charAt(4), type = s.charAt(5);
        if (v != '0' && v != '1' || type != 'R' && type != 'G' || s.charAt(8) != ' ') return null;
        int cipher;
        if (s.startsWith("01", 6)) cipher = 1;
        else if (s.startsWith("02", 6)) cipher = 2;
        else return null;
        String[] rest = s.substring(9).split(" ", -1);
        int version = v - '0';
        if (rest.length != (version == 0 ? 2 : 3)) return null;
        for (String part : rest) if (part.isEmpty()) return null;
        return new TlsPskIdentity(version, type == 'G', cipher, rest[0], rest[1], version == 1 ? rest[2] : null);
    }

    @Override
    public String toString() {
        String base = String.format("NVMe%d%c%02d %s %s", version, generated ? 'G' : 'R', cipher, hostNqn, subsysNqn);
        return version == 0 ? base : base + " " + digest;
    }
}
