package io.hadronio.nio;

import io.hadronio.platform.EventFd;
import io.hadronio.platform.PlatformChannels;
import io.hadronio.platform.PollSet;
import io.hadronio.worker.AdaptiveSpin;
import io.hadronio.runtime.UcxRuntime;
import io.hadronio.worker.Waiters;
import io.hadronio.worker.WorkerGroup;
import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.IllegalSelectorException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.spi.AbstractSelectableChannel;
import java.nio.channels.spi.AbstractSelector;
import java.nio.channels.spi.SelectorProvider;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A {@link java.nio.channels.Selector} for hadroNIO channels and, alongside them,
 * channels of the JDK's provider ({@code DatagramChannel}, {@code Pipe}).
 *
 * <p>A selection progresses the UCX workers, asks the hadroNIO channels that may be ready
 * which of their interest ops are (from UCX request state and control events), and asks
 * its epoll set which fds are ready. Which channels it asks (a pass costs in proportion to
 * them, not to the keys registered):
 * <ul>
 * <li>keys in its <em>queue</em>: a channel queues its keys ({@link ReadySignal}) when its
 *     connection's state changes and when one of its UCX requests completes (a completion
 *     names its connection); a key is queued at registration and when its interest set
 *     changes. A key is in the queue at most once (its {@code queued} flag), and the flag
 *     is cleared before the channel is asked, so a change after the look queues it again;</li>
 * <li>keys found ready at the previous pass: NIO's readiness is level-triggered, and a key
 *     that stays ready must be selected again without a new event;</li>
 * <li>keys whose fd epoll reports ready: a key with an fd (JDK channels, plain TCP
 *     connections, connections with a direction still on the kernel socket, listeners) has
 *     it registered in the selector's epoll set for its interest ops, kept in line whenever
 *     the key is asked (its channel queues it when its fd comes or goes); epoll, as the
 *     JDK's own selector, costs in proportion to the ready fds;</li>
 * <li>every key once per nap ({@link #maxSleepMillis}): the safety net that bounds the cost
 *     of a missed signal, as the bounded nap bounds a missed wake-up.</li>
 * </ul>
 * Nothing ready: it busy-polls for the configured
 * window, then sleeps in {@code poll(2)} on its own eventfd, the epoll fd and
 * the event fd of each worker it watches (one thread at a time watches a worker; see
 * {@link Waiters}). Everything that can make a hadroNIO channel ready wakes it: UCX
 * events through the worker's event fd, or through our eventfd when another thread
 * handled them; control events, accepted connections, finished connects, interest
 * changes and {@link #wakeup()} through our eventfd.
 *
 * <p>Sets follow {@code sun.nio.ch.SelectorImpl}: {@link #keys()} is unmodifiable,
 * {@link #selectedKeys()} allows removal but not addition; cancelled keys leave at the
 * next selection. Selection synchronises on the selector, then on the selected-key set.
 * The selections with an action ({@link #select(Consumer)} and the like) do what
 * {@code SelectorImpl}'s do: they hand each key found ready to the action, with its ready
 * set replaced, after the selection's sleep; they neither use nor clear the selected-key
 * set; and a selection started by the action fails with {@link IllegalStateException}.
 * Agrona-style tricks that swap {@code sun.nio.ch.SelectorImpl}'s selected-key set by
 * reflection do not apply to this class (they fail and fall back, as Netty's do); its own
 * set ({@link SelectedKeys}) allocates nothing per key, as theirs does not.
 */
public final class HadronioSelector extends AbstractSelector {
    // longest sleep without any wake-up; bounds the cost of a missed signal. Tests set it
    // to hours, so that a missed wake-up shows as a hang instead of a slow selection.
    static volatile int maxSleepMillis = 250;

    private final UcxRuntime runtime;
    // the runtime's worker groups; NOT_STARTED until its start has finished (learnt at the next
    // select: a connection may be on UCX only from then on), empty if it failed
    private WorkerGroup[] groups;
    private static final WorkerGroup[] NOT_STARTED = new WorkerGroup[0];
    private final Set<SelectionKey> keys = ConcurrentHashMap.newKeySet();
    private final Set<SelectionKey> publicKeys = Collections.unmodifiableSet(keys);
    // the selected-key set: applications may remove keys, not add them; adding allocates nothing
    private final SelectedKeys selectedKeys = new SelectedKeys();
    // registered keys of hadroNIO connections (the only channels whose readiness comes from a UCX
    // worker): a selector without any neither progresses nor watches the workers. A listener-only
    // selector (Netty's boss loop) that watched a worker would be woken first by every UCX message
    // for another selector's connections, then wake that one: two wake-ups per message on a busy
    // core (measured: gRPC, 4 calls in flight, p50 ~1.8x the JDK's). Never under-counts.
    private final java.util.concurrent.atomic.AtomicInteger connectionKeys = new java.util.concurrent.atomic.AtomicInteger();
    // a wakeup() not yet consumed by a selection
    private final AtomicBoolean wakeupPending = new AtomicBoolean();
    // a selection is sleeping (or about to): wakeup() and interest changes must signal it
    private volatile boolean sleeping;
    // our own wake-up fd, polled in every sleep
    private final EventFd wakeFd;
    // this selector among a worker's waiters: others wake it through wakeFd
    private final Waiters.Waiter waiter;
    // sleeps that ended, whatever woke them (for tests; written by the selecting thread only)
    private volatile long wakeUps;
    // reused by each sleep: our eventfd, the event fds of the workers we watch, the epoll fd
    private final PollSet pollSet = new PollSet(8);
    // the fds of keys that have one (JDK channels, hadroNIO connections on kernel TCP, listeners)
    // with their interest: a pass asks epoll for the ready ones instead of polling them all
    private final SelectorFds fds;
    // hadroNIO listeners' fds are polled before sleeping, and every LISTENER_PASSES spin passes
    private static final int LISTENER_PASSES = 64;

    // ---- which keys a pass asks (see the class comment); the selecting thread's, under our lock ----
    // the queue: keys signalled since they were last taken (an intrusive stack; any thread pushes,
    // the selecting thread takes all at once). Pushes and takes allocate nothing.
    private volatile HadronioSelectionKey queueHead;
    private static final java.lang.invoke.VarHandle QUEUE_HEAD;

    static {
        try {
            QUEUE_HEAD = java.lang.invoke.MethodHandles.lookup()
                    .findVarHandle(HadronioSelector.class, "queueHead", HadronioSelectionKey.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // keys taken from the queue and not asked yet
    private HadronioSelectionKey[] taken = new HadronioSelectionKey[16];
    private int takenCount;
    // the keys the current pass asked, and of those the ones found ready: asked again next pass
    private HadronioSelectionKey[] asked = new HadronioSelectionKey[16];
    private int askedCount;
    private HadronioSelectionKey[] retained = new HadronioSelectionKey[16];
    private int retainedCount;
    // number of the current pass (HadronioSelectionKey.pass: asked in this pass already)
    private long passNumber;
    // the next pass asks every key: the safety net for a missed signal (see checkSafetyNet)
    private boolean askAll;
    private long lastAskAllNanos = System.nanoTime();
    // keys the last pass asked (for tests: a pass costs in proportion to them)
    private int lastPassAsked;
    // what the scans of the current selection found: keys with ready ops for their interest
    // set (any: the selection ends), and how many of them scan added or gave new ready ops
    private int readyCount;
    private int updatedCount;
    // a selection with an action: scans collect the ready keys and their ops here (the first
    // readyCount entries), for the action once the selection has stopped waiting
    private boolean collecting;
    private HadronioSelectionKey[] readyKeys = new HadronioSelectionKey[16];
    private int[] readyKeyOps = new int[16];
    // a selection runs; the selector's lock is reentrant, so this tells an action's selection
    private boolean inSelect;
    // the registered keys as an array, for the safety net's pass over every key (iterating the
    // concurrent set would allocate an iterator); rebuilt when needed after keys came or went.
    // The selecting thread's (keyArray()); keysChanged is set by any thread
    private HadronioSelectionKey[] keyArray = new HadronioSelectionKey[0];
    private volatile boolean keysChanged;
    // the selecting thread's spin before it sleeps (only one thread selects at a time)
    private final AdaptiveSpin spin;

    public HadronioSelector(SelectorProvider provider, UcxRuntime runtime) throws IOException {
        super(provider);
        this.runtime = runtime;
        WorkerGroup[] started = runtime.groups();
        this.groups = started == null ? NOT_STARTED : started;
        this.spin = new AdaptiveSpin(runtime.config().spinNanos(), runtime.config().spinYields());
        this.wakeFd = new EventFd();
        try {
            this.fds = new SelectorFds();
        } catch (IOException e) {
            wakeFd.close();
            throw e;
        }
        this.waiter = new Waiters.Waiter() {
            @Override
            protected void wake() {
                wakeFd.signal();
            }

            // another thread's progress handled events: they concern us only if they queued one of our keys
            @Override
            protected boolean wantsWake() {
                return queueHead != null;
            }

            // an event loop selects again at once: waking another waiter to take the watch
            // each time we leave would cost a wake-up per message (see Waiters, rule 5)
            @Override
            protected boolean keepsWatch() {
                return true;
            }
        };
    }

    private void ensureOpen() {
        if (!isOpen()) {
            throw new ClosedSelectorException();
        }
    }

    @Override
    public Set<SelectionKey> keys() {
        ensureOpen();
        return publicKeys;
    }

    @Override
    public Set<SelectionKey> selectedKeys() {
        ensureOpen();
        return selectedKeys;
    }

    @Override
    protected SelectionKey register(AbstractSelectableChannel channel, int ops, Object attachment) {
        int fd = -1;
        // ours first: our socket channels are SelChImpls too (TrustedSocketChannel), without an fd to poll
        if (channel instanceof UcxSelectable) {
            // another provider instance has its own workers, whose events we never sleep on
            if (channel.provider() != provider()) {
                throw new IllegalSelectorException();
            }
        } else {
            if (!PlatformChannels.isPlatformChannel(channel)) {
                throw new IllegalSelectorException();
            }
            fd = PlatformChannels.fd(channel);
        }
        ensureOpen();
        HadronioSelectionKey key = new HadronioSelectionKey(channel, this, fd, ops);
        key.attach(attachment);
        if (channel instanceof UcxSelectable u && u.isConnection()) {
            // before the key can be asked: from now on the selections watch the workers
            synchronized (key) {
                key.countedAsConnection = true;
            }
            connectionKeys.incrementAndGet();
        }
        keys.add(key);
        refreshKeyArray();
        if (channel instanceof UcxSelectable u) {
            u.readySignal().add(key);
        }
        if (!isOpen()) {
            // closed meanwhile, after (or while) implCloseSelector deregistered the keys it saw
            keys.remove(key);
            forget(key);
            refreshKeyArray();
            throw new ClosedSelectorException();
        }
        // the next pass sorts it in and asks it; a sleeping selection polls the fds it had: a JDK channel's must be added
        key.queueForSelection();
        interestChanged();
        return key;
    }

    @Override
    public int selectNow() throws IOException {
        return lockAndSelect(null, 0);
    }

    @Override
    public int select(long timeout) throws IOException {
        if (timeout < 0) {
            throw new IllegalArgumentException("Negative timeout");
        }
        return lockAndSelect(null, timeout == 0 ? -1 : timeout);
    }

    @Override
    public int select() throws IOException {
        return lockAndSelect(null, -1);
    }

    @Override
    public int selectNow(Consumer<SelectionKey> action) throws IOException {
        Objects.requireNonNull(action);
        return lockAndSelect(action, 0);
    }

    @Override
    public int select(Consumer<SelectionKey> action, long timeout) throws IOException {
        Objects.requireNonNull(action);
        if (timeout < 0) {
            throw new IllegalArgumentException("Negative timeout");
        }
        return lockAndSelect(action, timeout == 0 ? -1 : timeout);
    }

    @Override
    public int select(Consumer<SelectionKey> action) throws IOException {
        Objects.requireNonNull(action);
        return lockAndSelect(action, -1);
    }

    /** @param action null: a selection that updates the selected-key set */
    private int lockAndSelect(Consumer<SelectionKey> action, long timeout) throws IOException {
        synchronized (this) {
            ensureOpen();
            if (inSelect) {
                throw new IllegalStateException("select in progress");
            }
            inSelect = true;
            try {
                synchronized (selectedKeys) {
                    return doSelect(action, timeout);
                }
            } finally {
                inSelect = false;
            }
        }
    }

    /**
     * A selection: cancelled keys leave first, then the loop progresses the workers and
     * asks the keys that may be ready (see the class comment) until one is ready for its
     * interest set, busy for the spin window,
     * then sleeping. As with the JDK, whose poll reports a channel that is ready whether or
     * not its key is selected already, a ready key ends the selection even when it updates
     * nothing (a key left in the selected set with the same ops ready again): the value
     * returned may be 0. Keys with nothing ready for their interest set do not end it.
     * Keys cancelled while it runs leave before a pass that found nothing is repeated,
     * never after one that found a key, so the value returned is exactly the number of
     * keys added to the selected set or given new ready ops.
     *
     * <p>With an action, the keys found ready are only collected, and handed to the action
     * when the selection has stopped waiting (the action may do anything, even block on a
     * channel, and must not do it while the selector sleeps on the workers); the value
     * returned is the number of keys handed over.
     *
     * @param action null: update the selected-key set
     * @param timeout -1: until something is ready or a wakeup; 0: do not wait; > 0: at most that many ms
     */
    private int doSelect(Consumer<SelectionKey> action, long timeout) throws IOException {
        processDeregisterQueue();
        checkSafetyNet(System.nanoTime());
        readyCount = 0;
        updatedCount = 0;
        collecting = action != null;
        if (timeout == 0) {
            wakeupPending.set(false);
            progressAll();
            takeQueue();
            scan(fds.poll(true));
            return action == null ? updatedCount : perform(action);
        }
        begin();
        try {
            long now = System.nanoTime();
            long deadline = timeout > 0 ? now + timeout * 1_000_000L : Long.MAX_VALUE;
            spin.start(now);
            int pass = 0;
            try {
                while (true) {
                    progressAll();
                    takeQueue();
                    scan(fds.poll(pass++ % LISTENER_PASSES == 0));
                    // a wakeup is consumed even when keys end the selection: it was for this one
                    boolean woken = wakeupPending.getAndSet(false);
                    if (readyCount > 0 || woken || Thread.currentThread().isInterrupted()) {
                        break;
                    }
                    now = System.nanoTime();
                    if (now - deadline >= 0) {
                        break;
                    }
                    checkSafetyNet(now);
                    processDeregisterQueue();
                    if (spin.turn(now)) {
                        continue;
                    }
                    int cap = maxSleepMillis;
                    sleep(deadline == Long.MAX_VALUE ? cap
                            : (int) Math.max(1, Math.min(cap, (deadline - now + 999_999) / 1_000_000)));
                    woken = wakeupPending.getAndSet(false);
                    if (readyCount > 0 || woken) {
                        break;
                    }
                }
            } finally {
                spin.stop();
            }
        } finally {
            end();
        }
        return action == null ? updatedCount : perform(action);
    }

    /**
     * Hands the keys collected by the scans to the action, each with its ready set replaced
     * by the ops found ready; returns how many it handed over. Like the JDK's, it stops with
     * {@link ClosedSelectorException} when an action closed the selector, and an exception
     * of the action ends it. A key cancelled meanwhile (by an earlier action, say) is left
     * out, which the contract allows.
     */
    private int perform(Consumer<SelectionKey> action) {
        int n = readyCount;
        int performed = 0;
        try {
            for (int i = 0; i < n; i++) {
                HadronioSelectionKey key = readyKeys[i];
                if (!key.isValid()) {
                    continue;
                }
                key.readyOps(readyKeyOps[i]);
                action.accept(key);
                ensureOpen();
                performed++;
            }
        } finally {
            Arrays.fill(readyKeys, 0, n, null);
        }
        return performed;
    }

    private void progressAll() {
        if (connectionKeys.get() == 0) {
            return;
        }
        if (groups == NOT_STARTED) {
            learnGroups();
        }
        for (WorkerGroup g : groups) {
            g.progressOnce();
        }
    }

    /**
     * The runtime's worker groups once its start has finished (selecting thread; until then a
     * connection is on the kernel, whose readiness the selector polls). A selector made while
     * the runtime still started (a JVM's first) asks at each pass with connections until then.
     */
    private void learnGroups() {
        WorkerGroup[] started = runtime.groups();
        if (started != null) {
            groups = started;
        }
    }

    /**
     * Sleeps on our eventfd, the event fds of the workers we watch and the JDK channels'
     * fds, unless a key is ready already; scans the keys afterwards.
     *
     * <p>Order matters: the selector first enters the workers' waiters (from then on, any
     * thread whose progress handles events wakes us), asks the keys once more, and arms
     * the workers it watches last. Arming refuses (we look again instead of sleeping)
     * when events came in since; asking the keys after arming could progress the worker
     * and swallow the event that should wake us.
     */
    private void sleep(int timeoutMillis) throws IOException {
        waiter.bind();
        sleeping = true;
        // read after announcing the sleep: a registration counts its key, then looks at
        // sleeping (interestChanged), so either we see its key or it wakes us
        final boolean watchWorkers = connectionKeys.get() > 0;
        if (watchWorkers && groups == NOT_STARTED) {
            learnGroups();
        }
        for (WorkerGroup g : groups) {
            if (watchWorkers) {
                g.enter(waiter);
            } else {
                g.release(waiter);
            }
        }
        try {
            takeQueue();
            scan(0);
            if (readyCount > 0 || wakeupPending.get()) {
                return;
            }
            pollSet.clear();
            pollSet.add(wakeFd.fd(), PollSet.POLLIN);
            // below Long.MAX_VALUE: a worker refused to arm for a while (WorkerGroup.REFUSED)
            long napNanos = Long.MAX_VALUE;
            for (int i = 0; watchWorkers && i < groups.length; i++) {
                WorkerGroup g = groups[i];
                int watch = g.watch(waiter);
                if (watch == WorkerGroup.LOOK_AGAIN) {
                    spin.clearRefusals();
                    return;
                }
                if (watch == WorkerGroup.REFUSED) {
                    long nap = spin.napAfterRefusal(System.nanoTime());
                    if (nap == 0) {
                        return;
                    }
                    // a send waits in UCX for the peer, and nothing signals when it goes: a short
                    // sleep, on the worker's event fd too (a thread that handles events for us
                    // signals it), then look again
                    napNanos = Math.min(napNanos, nap);
                    pollSet.add(g.eventFd(), PollSet.POLLIN);
                } else if (watch == WorkerGroup.WATCHING) {
                    spin.clearRefusals();
                    pollSet.add(g.eventFd(), PollSet.POLLIN);
                } else {
                    // whoever holds the watch may be a selector that stays away (Waiters, rule 5)
                    long nap = g.napNanosWhileNotWatching();
                    if (nap != Long.MAX_VALUE) {
                        timeoutMillis = (int) Math.max(1, Math.min(timeoutMillis, (nap + 999_999) / 1_000_000));
                    }
                }
            }
            int epollAt = fds.registered() > 0 ? pollSet.add(fds.epollFd(), PollSet.POLLIN) : -1;
            if (napNanos < Long.MAX_VALUE) {
                pollSet.pollNanos(napNanos);
            } else {
                pollSet.poll(timeoutMillis);
            }
            wakeUps++;
            if (pollSet.revents(0) != 0) {
                wakeFd.drain();
            }
            // only when one of its fds is ready: woken by a UCX event, an epoll_wait would find
            // nothing (one system call per wake-up; an fd ready a moment later is the next pass's)
            int ready = epollAt >= 0 && pollSet.revents(epollAt) != 0 ? fds.poll(true) : 0;
            takeQueue();
            scan(ready);
        } finally {
            if (watchWorkers) {
                for (WorkerGroup g : groups) {
                    g.leave(waiter);
                }
            }
            sleeping = false;
        }
    }

    /**
     * A key's interest set changed, or a key was registered. A selection that sleeps must
     * look again (the new interest may be ready now, or need another fd polled); one that
     * is spinning sees it on its next pass. Unlike {@link #wakeup()}, this does not end
     * the selection, so an event loop that changes interest ops never selects for nothing.
     */
    void interestChanged() {
        if (sleeping) {
            wakeFd.signal();
        }
    }

    /**
     * The safety net for a signal that never came (a path that changes readiness and does not
     * queue the key would be a bug): every key is asked at least once per {@link #maxSleepMillis},
     * whether the selections spin, sleep or keep finding keys: a missed signal costs at most
     * that, as a missed wake-up costs at most a nap. Tests that set the nap to hours switch it
     * off, so that such a bug shows as a hang.
     */
    private void checkSafetyNet(long now) {
        if (now - lastAskAllNanos > maxSleepMillis * 1_000_000L) {
            askAll = true;
        }
    }

    /** How many of this selector's sleeps have ended, whatever woke them (for tests). */
    long wakeUps() {
        return wakeUps;
    }

    /** How many keys the last pass asked (for tests). */
    int lastPassAsked() {
        return lastPassAsked;
    }

    /** A key for the next pass (any thread): pushed on the queue; its flag keeps it there once. */
    void enqueue(HadronioSelectionKey key) {
        HadronioSelectionKey head;
        do {
            head = queueHead;
            key.nextQueued = head;
        } while (!QUEUE_HEAD.compareAndSet(this, head, key));
    }

    /**
     * Takes every queued key (one volatile read when there is none) into {@link #taken}.
     */
    private void takeQueue() throws IOException {
        if (queueHead == null) {
            return;
        }
        HadronioSelectionKey key = (HadronioSelectionKey) QUEUE_HEAD.getAndSet(this, null);
        while (key != null) {
            HadronioSelectionKey next = key.nextQueued;
            key.dequeued();
            if (key.isValid()) {
                // before the pass asks epoll: a key registered or changed just now is polled by it
                fds.syncIfFd(key);
                if (takenCount == taken.length) {
                    taken = Arrays.copyOf(taken, 2 * takenCount);
                }
                taken[takenCount++] = key;
            }
            key = next;
        }
    }

    /**
     * One pass over the keys that may be ready (see the class comment): hadroNIO channels are
     * asked, keys whose fd epoll reported ready ({@code polled} entries of its last poll) are
     * asked and given the fd's events (JDK channels: those only). Each key found ready goes to
     * {@link #found} once, with every op found, and is asked again at the next pass.
     */
    private void scan(int polled) throws IOException {
        final long pass = ++passNumber;
        askedCount = 0;
        if (askAll) {
            askAll = false;
            lastAskAllNanos = System.nanoTime();
            for (HadronioSelectionKey key : keyArray()) {
                ask(key, pass);
            }
        }
        for (int i = 0; i < retainedCount; i++) {
            ask(retained[i], pass);
            retained[i] = null;
        }
        retainedCount = 0;
        for (int i = 0; i < takenCount; i++) {
            ask(taken[i], pass);
            taken[i] = null;
        }
        takenCount = 0;
        for (int i = 0; i < polled; i++) {
            HadronioSelectionKey key = fds.readyKey(i);
            if (key == null) {
                continue;
            }
            int revents = fds.readyEvents(i);
            ask(key, pass);
            if (!key.isValid()) {
                continue;
            }
            int interest = key.interestOpsUnchecked();
            key.passOps |= key.platformFd >= 0 ? UcxSelectable.opsFromPoll(interest, revents)
                    : ((UcxSelectable) key.channel()).readyOpsAfterPoll(interest, revents) & interest;
        }
        final HadronioSelectionKey[] a = asked;
        for (int i = 0, n = askedCount; i < n; i++) {
            HadronioSelectionKey key = a[i];
            a[i] = null;
            int ops = key.passOps;
            if (ops != 0 && key.isValid()) {
                found(key, ops);
                if (retainedCount == retained.length) {
                    retained = Arrays.copyOf(retained, 2 * retainedCount);
                }
                retained[retainedCount++] = key;
            }
        }
        lastPassAsked = askedCount;
        askedCount = 0;
    }

    /** Asks a key's channel once per pass which of its interest ops are ready (JDK channels: revents only). */
    private void ask(HadronioSelectionKey key, long pass) throws IOException {
        if (key.pass == pass) {
            return;
        }
        key.pass = pass;
        key.passOps = 0;
        if (!key.isValid()) {
            return;
        }
        fds.syncIfFd(key);
        if (askedCount == asked.length) {
            asked = Arrays.copyOf(asked, 2 * askedCount);
        }
        asked[askedCount++] = key;
        if (key.platformFd >= 0) {
            return;
        }
        int interest = key.interestOpsUnchecked();
        if (interest != 0) {
            key.passOps = ((UcxSelectable) key.channel()).readyOps(interest) & interest;
        }
    }

    /**
     * A key ready for {@code ops} of its interest set: counted in {@link #readyCount}, and
     * put in the selected set (counted in {@link #updatedCount} if that changed something)
     * or, with an action, collected for it.
     */
    private void found(HadronioSelectionKey key, int ops) {
        int n = readyCount;
        if (collecting) {
            if (n == readyKeys.length) {
                readyKeys = Arrays.copyOf(readyKeys, 2 * n);
                readyKeyOps = Arrays.copyOf(readyKeyOps, 2 * n);
            }
            readyKeys[n] = key;
            readyKeyOps[n] = ops;
        } else {
            updatedCount += setReady(key, ops);
        }
        readyCount = n + 1;
    }

    /** Adds the key to the selected set, or adds ops to its ready set; 1 when something changed. */
    private int setReady(HadronioSelectionKey key, int ready) {
        if (selectedKeys.holds(key)) {
            // unchecked: a key cancelled by another thread since the pass looked at it is still
            // updated (the next selection drops it), and the selection must not throw for it
            int old = key.readyOpsUnchecked();
            if ((old | ready) != old) {
                key.readyOps(old | ready);
                return 1;
            }
            return 0;
        }
        key.readyOps(ready);
        selectedKeys.put(key);
        return 1;
    }

    private void processDeregisterQueue() {
        Set<SelectionKey> cancelled = cancelledKeys();
        synchronized (cancelled) {
            if (cancelled.isEmpty()) {
                return;
            }
            for (Iterator<SelectionKey> it = cancelled.iterator(); it.hasNext(); ) {
                HadronioSelectionKey key = (HadronioSelectionKey) it.next();
                it.remove();
                keys.remove(key);
                forget(key);
                selectedKeys.remove(key);
                deregister(key);
                killIfClosed(key.channel(), key.platformFd);
            }
        }
        refreshKeyArray();
    }

    /**
     * The set of keys changed: {@link #keyArray} is rebuilt when next needed (by the safety
     * net, at most once per nap), not at every registration: rebuilding it at each of a wave
     * of 1,000 new connections cost a copy of the whole set each (JFR of a connection churn).
     */
    private void refreshKeyArray() {
        keysChanged = true;
    }

    /** The registered keys as an array (selecting thread), rebuilt if the set changed since. */
    private HadronioSelectionKey[] keyArray() {
        if (keysChanged) {
            // cleared first: a change while we copy marks it again
            keysChanged = false;
            keyArray = keys.toArray(new HadronioSelectionKey[0]);
        }
        return keyArray;
    }

    /** A key leaves: its channel stops signalling it, and the passes stop polling it (selecting thread). */
    private void forget(HadronioSelectionKey key) {
        if (key.channel() instanceof UcxSelectable u) {
            u.readySignal().remove(key);
        }
        synchronized (key) {
            // once per key: a failed registration and a concurrent close may both forget it
            if (key.countedAsConnection) {
                key.countedAsConnection = false;
                connectionKeys.decrementAndGet();
            }
        }
        if (Thread.holdsLock(this)) {
            try {
                fds.drop(key);
            } catch (IOException e) {
                // the fd is gone with its channel: nothing left to remove
            }
        }
    }

    private static void killIfClosed(SelectableChannel channel, int platformFd) {
        if (platformFd >= 0 && !channel.isOpen() && !channel.isRegistered()) {
            PlatformChannels.kill(channel);
        }
    }

    /**
     * Ends the current or next selection. Coalesced: only the first wakeup() after a
     * selection consumed the last one does anything, and it signals our eventfd only when
     * a selection sleeps (it sets {@link #sleeping} before it reads the flag set here).
     */
    @Override
    public HadronioSelector wakeup() {
        if (!wakeupPending.getAndSet(true) && sleeping) {
            wakeFd.signal();
        }
        return this;
    }

    @Override
    protected void implCloseSelector() throws IOException {
        wakeup();
        // the runtime's, not our field: the selecting thread may have learnt them a moment ago
        WorkerGroup[] all = runtime.groups();
        for (WorkerGroup g : all == null ? NOT_STARTED : all) {
            g.release(waiter);
        }
        synchronized (this) {
            synchronized (selectedKeys) {
                for (SelectionKey k : keys) {
                    HadronioSelectionKey key = (HadronioSelectionKey) k;
                    forget(key);
                    deregister(key);
                    killIfClosed(key.channel(), key.platformFd);
                }
                keys.clear();
                refreshKeyArray();
                fds.clear();
                Arrays.fill(retained, null);
                retainedCount = 0;
                Arrays.fill(taken, null);
                takenCount = 0;
                queueHead = null;
                selectedKeys.clear();
                cancelledKeys().clear();
            }
            pollSet.close();
            fds.close();
            wakeFd.close();
        }
    }
}
