package io.hadronio.app.grpc.ycsb;

import java.util.Locale;

/**
 * YCSB's core workloads A-F (the properties of YCSB 0.17's {@code workloads/workloada} ...
 * {@code workloadf}, reimplemented here, not YCSB's code): the mix of operations and how
 * keys are chosen. Records have {@code 10} fields of {@code 100} bytes, as in YCSB.
 */
public enum Workload {
    /** Update heavy: session store recording recent actions. */
    A(0.5, 0.5, 0, 0, 0, Distribution.ZIPFIAN),
    /** Read mostly: photo tagging. */
    B(0.95, 0.05, 0, 0, 0, Distribution.ZIPFIAN),
    /** Read only: user profile cache. */
    C(1.0, 0, 0, 0, 0, Distribution.ZIPFIAN),
    /** Read latest: user status updates; new records are the popular ones. */
    D(0.95, 0, 0.05, 0, 0, Distribution.LATEST),
    /** Short ranges: threaded conversations (scans of 1..100 records, uniform length). */
    E(0, 0, 0.05, 0.95, 0, Distribution.ZIPFIAN),
    /** Read-modify-write: user database. */
    F(0.5, 0, 0, 0, 0.5, Distribution.ZIPFIAN);

    /** How a workload picks the key of a read, update, scan or read-modify-write. */
    public enum Distribution { ZIPFIAN, LATEST, UNIFORM }

    public static final int FIELD_COUNT = 10;
    public static final int FIELD_LENGTH = 100;
    public static final int MAX_SCAN_LENGTH = 100;

    final double read;
    final double update;
    final double insert;
    final double scan;
    final double readModifyWrite;
    final Distribution distribution;

    Workload(double read, double update, double insert, double scan, double readModifyWrite, Distribution distribution) {
        this.read = read;
        this.update = update;
        this.insert = insert;
        this.scan = scan;
        this.readModifyWrite = readModifyWrite;
        this.distribution = distribution;
    }

    /** The operation for a uniform draw {@code u} in [0, 1). */
    Operation operation(double u) {
        double at = read;
        if (u < at) {
            return Operation.READ;
        }
        if (u < (at += update)) {
            return Operation.UPDATE;
        }
        if (u < (at += insert)) {
            return Operation.INSERT;
        }
        if (u < (at += scan)) {
            return Operation.SCAN;
        }
        return readModifyWrite > 0 ? Operation.READ_MODIFY_WRITE : Operation.READ;
    }

    /** "read 0.5, update 0.5; zipfian". */
    public String describe() {
        StringBuilder b = new StringBuilder();
        for (Operation op : Operation.values()) {
            double p = switch (op) {
                case READ -> read;
                case UPDATE -> update;
                case INSERT -> insert;
                case SCAN -> scan;
                case READ_MODIFY_WRITE -> readModifyWrite;
            };
            if (p > 0) {
                b.append(b.isEmpty() ? "" : ", ").append(op.label().toLowerCase(Locale.ROOT)).append(' ').append(p);
            }
        }
        return b + "; " + distribution.name().toLowerCase(Locale.ROOT);
    }
}
