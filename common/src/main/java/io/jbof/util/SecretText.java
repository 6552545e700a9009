package io.jbof.util;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** A secret or key given inline or as {@code @FILE} (which keeps it out of the process list). */
public final class SecretText {
    private SecretText() {}

    /**
     * The text itself, or the trimmed contents of FILE for {@code @FILE}; null stays null.
     *
     * @throws IllegalArgumentException FILE cannot be read (the message names it, never its contents)
     */
    public static String resolve(String value) {
        if (value == null || !value.startsWith("@")) return value;
        try {
            return Files.readString(Path.of(value.substring(1))).trim();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + value.substring(1) + ": " + e.getMessage(), e);
        }
    }
}
