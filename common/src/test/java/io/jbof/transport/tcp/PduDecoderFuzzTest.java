package io.jbof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;

/**
 * Coverage-guided fuzzing of NVMe/TCP framing (both sides' decoders, digests on or off): any byte
 * stream, cut into any chunks, either frames into whole PDUs whose length fields agree with their
 * bytes (on the target a data-digest mark may precede one), or fails with a PduException (which
 * becomes a TermReq) — never another exception, a frame
 * past the limit, or a leak. `mvn test` replays the saved inputs; JAZZER_FUZZ=1 fuzzes (scripts/fuzz).
 */
class PduDecoderFuzzTest {
    @FuzzTest(maxDuration = "30s")
    void anyByteStreamFramesOrFailsWithAPduException(FuzzedDataProvider d) {
        boolean controllerSide = d.consumeBoolean();
        int limit = d.consumeInt(128, 70_000);
        PduDecoder decoder = new PduDecoder(controllerSide, limit);
        if (d.consumeBoolean()) decoder.negotiated(d.consumeBoolean(), d.consumeBoolean(), limit);
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        try {
            while (d.remainingBytes() > 0) {
                byte[] chunk = d.consumeBytes(d.consumeInt(1, 4096));
                try {
                    ch.writeInbound(Unpooled.wrappedBuffer(chunk));
                } catch (DecoderException e) {
                    Throwable c = e.getCause();
                    assertTrue(
                            c instanceof PduException || c instanceof PduDecoder.DataDigestException,
                            "only protocol errors, not " + c);
                    break;
                }
                Object next;
                boolean marked = false;
                while ((next = ch.readInbound()) != null) {
                    if (next == PduDecoder.DATA_DIGEST_ERROR) {
                        // The controller side marks a PDU whose data digest failed; the PDU itself follows.
                        assertTrue(controllerSide && !marked, "a digest mark only on the target, once per PDU");
                        marked = true;
                        continue;
                    }
                    marked = false;
                    ByteBuf frame = (ByteBuf) next;
                    try {
                        int at = frame.readerIndex();
                        assertEquals(Pdu.plen(frame, at), frame.readableBytes(), "a frame is exactly one PDU");
                        assertTrue(
                                frame.readableBytes() <= Math.max(limit, Pdu.IC_LENGTH + 8),
                                "no frame beyond the negotiated limit");
                    } finally {
                        frame.release();
                    }
                }
                assertTrue(!marked, "a digest mark is always followed by its PDU");
            }
        } finally {
            ch.finishAndReleaseAll();
        }
    }
}
