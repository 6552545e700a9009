package io.jbof.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class TunableTest {
    @Test
    void theReadmeTableListsEveryTunableWithItsDefault() throws Exception {
        Path readme = Path.of("..", "README.md"); // surefire runs in the module folder
        String text = Files.readString(readme);
        for (Tunable t : Tunable.values()) {
            String row = "| `" + t.property() + "` | " + t.defaultValue() + " | " + t.description() + " |";
            assertTrue(text.contains(row), "README.md lacks the row: " + row);
        }
    }

    @Test
    void aValueThatIsNotANumberIsRefusedNamingTheProperty() {
        String p = Tunable.RDMA_SPIN_POLLS.property();
        System.setProperty(p, "lots");
        try {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, Tunable.RDMA_SPIN_POLLS::intValue);
            assertEquals("-Djbof.rdma.spinPolls=lots is not a whole number (default 64)", e.getMessage());
            System.setProperty(p, "0x10");
            assertEquals(16, Tunable.RDMA_SPIN_POLLS.intValue());
        } finally {
            System.clearProperty(p);
        }
        assertEquals(64, Tunable.RDMA_SPIN_POLLS.intValue());
    }
}
