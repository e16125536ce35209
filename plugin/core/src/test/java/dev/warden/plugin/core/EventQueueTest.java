package dev.warden.plugin.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class EventQueueTest {
    @Test
    void keepsOrderAndDrainsInChunks() {
        EventQueue q = new EventQueue(10);
        List<WardenRecord> sent = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Records.Chat c = TestSupport.chat("m" + i);
            sent.add(c);
            assertTrue(q.offer(c));
        }
        assertEquals(sent.subList(0, 3), q.drain(3));
        assertEquals(sent.subList(3, 5), q.drain(100));
        assertEquals(0, q.size());
    }

    @Test
    void fullQueueDropsTheNewRecordAndCountsIt() {
        EventQueue q = new EventQueue(2);
        assertTrue(q.offer(TestSupport.chat("a")));
        assertTrue(q.offer(TestSupport.chat("b")));
        assertFalse(q.offer(TestSupport.chat("c")));
        assertEquals(2, q.size());
        assertEquals(1, q.dropped());
        assertEquals("a", ((Records.Chat) q.drain(1).get(0)).message());
    }

    @Test
    void concurrentOffersNeverPassTheBound() throws Exception {
        EventQueue q = new EventQueue(1000);
        int threads = 8;
        int each = 500;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < each; i++) {
                    q.offer(TestSupport.chat("x"));
                }
            });
            w.start();
            workers.add(w);
        }
        start.countDown();
        for (Thread w : workers) {
            w.join();
        }
        assertEquals(1000, q.size());
        assertEquals(threads * each - 1000, q.dropped());
        assertEquals(1000, q.drain(5000).size());
    }
}
