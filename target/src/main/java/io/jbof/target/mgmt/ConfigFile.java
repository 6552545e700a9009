package io.jbof.target.mgmt;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.jbof.target.config.TargetConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The configuration file as the management API keeps it: written whole and atomically (a temporary
 * file beside it, fsync, rename over it, fsync of the folder), so a crash at any point leaves the
 * old or the new file, never a mix. Mode 0600: it may name secrets (or the @FILEs holding them).
 */
public final class ConfigFile {
    static final ObjectMapper JSON = new ObjectMapper()
            .setSerializationInclusion(JsonInclude.Include.NON_NULL)
            .enable(SerializationFeature.INDENT_OUTPUT);

    private ConfigFile() {}

    /** The JSON that {@code --config} loads. */
    public static byte[] bytes(TargetConfig cfg) throws IOException {
        return JSON.writeValueAsBytes(cfg);
    }

    /** An independent copy (what a change is applied to before it is known to succeed). */
    public static TargetConfig copy(TargetConfig cfg) {
        return JSON.convertValue(cfg, TargetConfig.class);
    }

    /** Replaces {@code file} with {@code cfg}, durably. */
    public static void write(Path file, TargetConfig cfg) throws IOException {
        Path abs = file.toAbsolutePath();
        Path dir = abs.getParent();
        Path tmp = dir.resolve(
                "." + abs.getFileName() + ".tmp-" + ProcessHandle.current().pid());
        byte[] data = bytes(cfg);
        Files.deleteIfExists(tmp);
        try (FileChannel ch = FileChannel.open(
                tmp,
                Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            ByteBuffer b = ByteBuffer.wrap(data);
            while (b.hasRemaining()) ch.write(b);
            ch.force(true);
        }
        try {
            Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.deleteIfExists(tmp);
            throw new IOException("cannot replace " + abs + " atomically: " + e.getMessage(), e);
        }
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true); // the rename itself survives a power cut
        }
    }
}
