package io.jbof.csi;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the kernel says is mounted where (/proc/self/mountinfo), rather than what a folder looks like. */
final class Mounts {
    private Mounts() {}

    /** The file system type mounted at {@code path}, or null when nothing is. */
    static String typeAt(Path path) throws IOException {
        String want = path.toAbsolutePath().normalize().toString();
        String type = null;
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
            String[] f = line.split(" ");
            int dash = line.indexOf(" - ");
            if (f.length < 5 || dash < 0) continue;
            if (unescape(f[4]).equals(want))
                type = line.substring(dash + 3).split(" ")[0]; // the last one mounted there wins
        }
        return type;
    }

    static boolean isMountPoint(Path path) throws IOException {
        return typeAt(path) != null;
    }

    /** mountinfo writes space, tab, newline and backslash as \\ooo. */
    private static String unescape(String s) {
        if (s.indexOf('\\') < 0) return s;
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 3 < s.length()) {
                b.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
