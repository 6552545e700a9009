package io.jbof.transport.rdma;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

class RegisteredMemoryTest {
    @Test
    void aFailedRegistrationCanSayThisProcesssLockedMemoryLimit() {
        String limit = RegisteredMemory.lockLimit();
        assertTrue(limit.matches("this process may lock (unlimited memory|\\d+ KiB)"), limit);
    }
}
