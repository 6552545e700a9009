package io.jbof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RegisteredMemoryTest {
    @Test
    void aFailedRegistrationCanSayThisProcesssLockedMemoryLimit() {
        String limit = RegisteredMemory.lockLimit();
        assertTrue(limit.matches("this process may lock (unlimited memory|\\d+ KiB)"), limit);
    }
}
