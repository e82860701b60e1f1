package io.hadronio.app.grpc.ycsb;

/** YCSB's operations, with the names YCSB reports them under. */
public enum Operation {
    READ("READ"), UPDATE("UPDATE"), INSERT("INSERT"), SCAN("SCAN"), READ_MODIFY_WRITE("READ-MODIFY-WRITE");

    private final String label;

    Operation(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
