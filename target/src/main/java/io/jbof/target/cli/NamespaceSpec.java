package io.jbof.target.cli;

import io.jbof.target.config.TargetConfig;
import io.jbof.util.Sizes;
import java.nio.file.Files;
import java.nio.file.Path;

/** Parses PATH[:SIZE][,bs=512|4096][,ro][,direct][,force][,nsid=N][,nqn=NQN] from --namespace (PATH a file or a block device). */
final class NamespaceSpec {
    final TargetConfig.NamespaceConfig ns = new TargetConfig.NamespaceConfig();
    String nqn;

    static NamespaceSpec parse(String text) {
        NamespaceSpec spec = new NamespaceSpec();
        String[] parts = text.split(",");
        String pathAndSize = parts[0];
        int colon = pathAndSize.lastIndexOf(':');
        // A path that exists as given is a path, colons and all (/dev/disk/by-path/pci-0000:00:1f.2-ata-1).
        if (colon > 0 && !Files.exists(Path.of(pathAndSize))) {
            String size = pathAndSize.substring(colon + 1);
            Sizes.parse(size); // validates, with a clear message
            spec.ns.size = size;
            spec.ns.path = pathAndSize.substring(0, colon);
        } else {
            spec.ns.path = pathAndSize;
        }
        if (spec.ns.path.isEmpty())
            throw new IllegalArgumentException(
                    "--namespace '" + text + "' has no path (use PATH:SIZE, e.g. /var/lib/jbof/vol1.img:1G)");
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i].trim();
            if (p.equals("ro") || p.equals("readonly")) {
                spec.ns.readOnly = true;
            } else if (p.equals("direct")) {
                spec.ns.direct = true;
            } else if (p.equals("force")) {
                spec.ns.force = true;
            } else if (p.startsWith("bs=")) {
                spec.ns.blockSize = number(p.substring(3), "bs", text);
                if (spec.ns.blockSize != 512 && spec.ns.blockSize != 4096)
                    throw new IllegalArgumentException("block size must be 512 or 4096, not " + p.substring(3));
            } else if (p.startsWith("nsid=")) {
                spec.ns.nsid = number(p.substring(5), "nsid", text);
            } else if (p.startsWith("nqn=")) {
                spec.nqn = p.substring(4);
            } else {
                throw new IllegalArgumentException("unknown namespace option '" + p + "' in '" + text
                        + "' (known: bs=512|4096, ro, direct, force, nsid=N, nqn=NQN)");
            }
        }
        return spec;
    }

    private static int number(String value, String key, String text) {
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + value + " in --namespace '" + text + "' is not a number"
                    + (key.equals("nsid") ? " (an NSID from 1, e.g. nsid=2)" : " (512 or 4096)"));
        }
    }
}
