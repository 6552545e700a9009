package io.jbof.nvme;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.UUID;
import org.junit.jupiter.api.Test;

class NqnTest {
    @Test
    void acceptsDateDomainAndUuidForms() {
        assertTrue(Nqn.isValid("nqn.2024-01.io.jbof:vol1"));
        assertTrue(Nqn.isValid(Nqn.DISCOVERY));
        assertTrue(Nqn.isValid(Nqn.forUuid(UUID.randomUUID())));
    }

    @Test
    void refusesWhatLinuxRefuses() {
        assertFalse(Nqn.isValid("vol1"));
        assertFalse(Nqn.isValid("nqn.24-01.io.jbof:vol1"));
        assertFalse(Nqn.isValid("nqn.2024-01.io.jbof:" + "x".repeat(250)), "longer than 223 bytes");
        assertFalse(Nqn.isValid(""));
    }
}
