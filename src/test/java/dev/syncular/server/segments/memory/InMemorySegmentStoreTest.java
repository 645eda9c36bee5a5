package dev.syncular.server.segments.memory;

import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentStoreContract;

/** Runs the {@link SegmentStoreContract} against {@link InMemorySegmentStore}. */
class InMemorySegmentStoreTest extends SegmentStoreContract {
    @Override
    protected SegmentStore createStore() {
        return new InMemorySegmentStore();
    }
}
