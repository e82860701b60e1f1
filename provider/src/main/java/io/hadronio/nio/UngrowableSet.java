package io.hadronio.nio;

import java.nio.channels.SelectionKey;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Set;

/** The selected-key set as applications see it: removal allowed, addition not. */
final class UngrowableSet extends AbstractSet<SelectionKey> {
    private final Set<SelectionKey> set;

    UngrowableSet(Set<SelectionKey> set) {
        this.set = set;
    }

    @Override
    public int size() {
        return set.size();
    }

    @Override
    public boolean isEmpty() {
        return set.isEmpty();
    }

    @Override
    public boolean contains(Object o) {
        return set.contains(o);
    }

    @Override
    public Iterator<SelectionKey> iterator() {
        return set.iterator();
    }

    @Override
    public boolean remove(Object o) {
        return set.remove(o);
    }

    @Override
    public void clear() {
        set.clear();
    }

    @Override
    public boolean add(SelectionKey key) {
        throw new UnsupportedOperationException();
    }
}
