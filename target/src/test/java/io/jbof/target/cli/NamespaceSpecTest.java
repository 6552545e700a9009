package io.jbof.target.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NamespaceSpecTest {
    @TempDir
    Path dir;

    @Test
    void directAndForceAreOptionsOfTheNamespace() {
        NamespaceSpec s = NamespaceSpec.parse("/dev/loop7,direct,force,nsid=3");
        assertEquals("/dev/loop7", s.ns.path);
        assertNull(s.ns.size);
        assertTrue(s.ns.direct);
        assertTrue(s.ns.force);
        assertEquals(3, s.ns.nsid);
        NamespaceSpec plain = NamespaceSpec.parse("/srv/vol1.img:1G");
        assertFalse(plain.ns.direct || plain.ns.force);
        assertEquals("1G", plain.ns.size);
    }

    @Test
    void anExistingPathWithAColonIsAPathNotAPathAndASize() throws Exception {
        Path byPath = Files.createFile(dir.resolve("pci-0000:00:1f.2-ata-1"));
        NamespaceSpec s = NamespaceSpec.parse(byPath + ",direct");
        assertEquals(byPath.toString(), s.ns.path);
        assertNull(s.ns.size);
    }

    @Test
    void anUnknownOptionNamesTheKnownOnes() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> NamespaceSpec.parse("/srv/a.img:1G,odirect"));
        assertTrue(e.getMessage().contains("direct, force"), e.getMessage());
    }
}
